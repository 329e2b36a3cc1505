"""The numbers behind the charts: each bot's primary figure per match (the
game's first ranking key: stars, points...) and rating after each of its matches (pure
functions over finished matches of one game).

The figures agree with the standings of the same matches: the same order
(:func:`arena.tournament.standings.counted`), figures counted once per seat,
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
from arena.web.ladders import primary_result

Wire = dict[str, Any]
MAX_POINTS = 240  # per line; a long ladder is thinned evenly (the last point stays)


def thin(points: list[Any], limit: int = MAX_POINTS) -> list[Any]:
    """At most ``limit`` points, evenly spread, always keeping the last."""
    if len(points) <= limit:
        return points
    step = (len(points) - 1) / (limit - 1)
    return [points[round(i * step)] for i in range(limit)]


def scope_series(matches: list[MatchRecord], game: str) -> Wire:
    """``{"matches": n, "points": {bot: [(x, figure_per_match, played)]},
    "ratings": {bot: [(x, mu, sigma)]}}`` over the matches of ``game``,
    where ``x`` is the match's number (1-based) in finishing order."""
    key = primary_result(game).result_key
    model = PlackettLuce()
    ratings: dict[str, Any] = {}
    totals: dict[str, list[float]] = {}  # bot -> [figure, seats]
    points: dict[str, list[tuple[int, float, int]]] = {}
    rating_points: dict[str, list[tuple[int, float, float]]] = {}
    done = [m for m in counted(matches) if m.game == game]
    for x, match in enumerate(done, start=1):
        result = match.result or {}
        won = result.get(key) or [0] * len(match.players)
        for seat, bot in enumerate(match.players):
            tally = totals.setdefault(bot, [0, 0])
            tally[0] += won[seat] if seat < len(won) else 0
            tally[1] += 1
        _rate(model, ratings, match)
        for bot in dict.fromkeys(match.players):
            s, n = totals[bot]
            points.setdefault(bot, []).append((x, s / n, int(n)))
            r = ratings[bot]
            rating_points.setdefault(bot, []).append((x, r.mu, r.sigma))
    return {"matches": len(done),
            "points": {b: thin(p) for b, p in points.items()},
            "ratings": {b: thin(p) for b, p in rating_points.items()}}


def bot_points(matches: list[MatchRecord], bot: str,
               game: str) -> list[tuple[str, int | float, float]]:
    """``(match_id, figure won, figure per match so far)`` per seat of
    ``bot`` in the matches of ``game``, in finishing order."""
    key = primary_result(game).result_key
    out: list[tuple[str, int | float, float]] = []
    total: int | float = 0
    for match in counted(matches):
        if match.game != game:
            continue
        won = (match.result or {}).get(key) or []
        for seat, who in enumerate(match.players):
            if who == bot:
                total += won[seat] if seat < len(won) else 0
                out.append((match.id, won[seat] if seat < len(won) else 0,
                            total / (len(out) + 1)))
    return out
