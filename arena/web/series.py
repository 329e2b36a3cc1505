"""The numbers behind the charts: each bot's stars per match and rating
after each of its matches (pure functions over finished matches).

The figures agree with the standings of the same matches: the same order
(:func:`arena.tournament.standings.counted`), stars counted once per seat,
ratings updated by the same Plackett-Luce step, so the last point of every
line is the bot's standings row.
"""

from __future__ import annotations

from typing import Any

from openskill.models import PlackettLuce

from arena.storage.base import MatchRecord
# The standings' own update step: a private helper, used so the chart can
# never drift from the table it illustrates.
from arena.tournament.standings import _rate, counted

Wire = dict[str, Any]
MAX_POINTS = 240  # per line; a long ladder is thinned evenly (the last point stays)


def thin(points: list[Any], limit: int = MAX_POINTS) -> list[Any]:
    """At most ``limit`` points, evenly spread, always keeping the last."""
    if len(points) <= limit:
        return points
    step = (len(points) - 1) / (limit - 1)
    return [points[round(i * step)] for i in range(limit)]


def scope_series(matches: list[MatchRecord]) -> Wire:
    """``{"matches": n, "stars": {bot: [(x, stars_per_match, played)]},
    "ratings": {bot: [(x, mu, sigma)]}}``
    where ``x`` is the match's number (1-based) in finishing order."""
    model = PlackettLuce()
    ratings: dict[str, Any] = {}
    totals: dict[str, list[int]] = {}  # bot -> [stars, seats]
    stars: dict[str, list[tuple[int, float, int]]] = {}
    rating_points: dict[str, list[tuple[int, float, float]]] = {}
    done = counted(matches)
    for x, match in enumerate(done, start=1):
        result = match.result or {}
        won = result.get("stars") or [0] * len(match.players)
        for seat, bot in enumerate(match.players):
            tally = totals.setdefault(bot, [0, 0])
            tally[0] += won[seat] if seat < len(won) else 0
            tally[1] += 1
        _rate(model, ratings, match)
        for bot in dict.fromkeys(match.players):
            s, n = totals[bot]
            stars.setdefault(bot, []).append((x, s / n, n))
            r = ratings[bot]
            rating_points.setdefault(bot, []).append((x, r.mu, r.sigma))
    return {"matches": len(done),
            "stars": {b: thin(p) for b, p in stars.items()},
            "ratings": {b: thin(p) for b, p in rating_points.items()}}


def bot_stars(matches: list[MatchRecord], bot: str) -> list[tuple[str, int, float]]:
    """``(match_id, stars won, stars per match so far)`` per seat of ``bot``,
    in finishing order."""
    out: list[tuple[str, int, float]] = []
    total = 0
    for match in counted(matches):
        won = (match.result or {}).get("stars") or []
        for seat, who in enumerate(match.players):
            if who == bot:
                total += won[seat] if seat < len(won) else 0
                out.append((match.id, won[seat] if seat < len(won) else 0,
                            total / (len(out) + 1)))
    return out
