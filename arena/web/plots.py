"""The charts of the tournament and bot pages, from :mod:`arena.web.series`."""

from __future__ import annotations

from typing import Any

from arena.storage.base import MatchRecord
from arena.web.charts import Series, legend, line_chart
from arena.web.series import bot_stars

Wire = dict[str, Any]
MAX_DOTS = 30  # points per line drawn as dots too; longer lines are lines only


def _ordered(by_bot: dict[str, Any], order: list[str]) -> list[str]:
    """Standings order first (colours follow the ranking), then the rest."""
    rest = sorted(b for b in by_bot if b not in order)
    return [b for b in order if b in by_bot] + rest


def scope_charts(data: Wire, order: list[str], what: str) -> str:
    """Stars per match and rating (with a μ ± σ band) of every bot of a
    scope, over its matches; ``what`` names the scope ("the tournament")."""
    bots = _ordered(data["stars"], order)
    stars, ratings = [], []
    for b in bots:
        points = data["stars"][b]
        dots = len(points) <= MAX_DOTS  # a short line (one match) still shows
        stars.append(Series(
            b, [(x, y) for x, y, _ in points],
            marks=[(x, y, f"{b}: {y:.2f} after {n}") for x, y, n in points] if dots else [],
            summary=f"{b}: {points[-1][1]:.2f} after {points[-1][2]} matches."))
        points = data["ratings"][b]
        mu, sigma = points[-1][1], points[-1][2]
        ratings.append(Series(
            b, [(x, m) for x, m, _ in points],
            band=[(x, m - s, m + s) for x, m, s in points],
            marks=[(x, m, f"{b}: {m:.1f} ± {s:.1f}") for x, m, s in points] if dots else [],
            summary=f"{b}: {mu:.1f} ± {sigma:.1f}."))
    top = max((y for s in stars for _, y in s.points), default=1.0)
    stars_svg = line_chart(
        f"Stars per match over {what}", stars, ident="stars-all",
        x_label=f"matches of {what}, in the order they finished",
        y_label="★ per match so far", y_range=(0.0, max(1.0, top)))
    ratings_svg = line_chart(f"Rating over {what}", ratings, ident="rating-all",
                             x_label=f"matches of {what}", y_label="rating μ")
    return (
        '<div class="charts">'
        f'<figure>{stars_svg}<figcaption>Stars per match of each bot so far, after each '
        f'of its matches.</figcaption>{legend(stars)}</figure>'
        f'<figure>{ratings_svg}<figcaption>Skill estimate μ of each bot after each of its '
        f'matches; the band is μ ± σ, its uncertainty.</figcaption>{legend(ratings)}'
        '</figure></div>')


def bot_stars_chart(matches: list[MatchRecord], bot: str) -> str:
    """One bot's stars in each of its matches (dots) and its running mean."""
    rows = bot_stars(matches, bot)
    if not rows:
        return '<p class="empty">No finished matches in this scope.</p>'
    line = Series(bot, [(i, mean) for i, (_, _, mean) in enumerate(rows, start=1)],
                  marks=[(i, won, f"{mid}: {won}★")
                         for i, (mid, won, _) in enumerate(rows, start=1)],
                  summary=f"{bot} won {sum(w for _, w, _ in rows)} stars in {len(rows)} "
                          f"matches, {rows[-1][2]:.2f} per match.")
    top = max(w for _, w, _ in rows)
    return line_chart(f"Stars per match of {bot}", [line], ident="stars",
                      x_label="its matches (oldest → newest)",
                      y_label="★ (dots: that match; line: so far)",
                      y_range=(0.0, max(1.0, float(top))))
