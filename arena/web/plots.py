"""The charts of the tournament and bot pages, from :mod:`arena.web.series`."""

from __future__ import annotations

from typing import Any

from arena.storage.base import MatchRecord
from arena.web.charts import Series, legend, line_chart
from arena.web.ladders import figure_columns, primary_result
from arena.web.series import bot_points

Wire = dict[str, Any]
MAX_DOTS = 30  # points per line drawn as dots too; longer lines are lines only


def _ordered(by_bot: dict[str, Any], order: list[str]) -> list[str]:
    """Standings order first (colours follow the ranking), then the rest."""
    rest = sorted(b for b in by_bot if b not in order)
    return [b for b in order if b in by_bot] + rest


def figure_words(game: str) -> tuple[str, str]:
    """(what the game's primary figure is called, its symbol in axis
    labels), e.g. ("Stars", "★") or ("Points", "points")."""
    name = figure_columns(game).points_name
    suffix = primary_result(game).suffix.strip()
    return name.capitalize(), suffix or name


def scope_charts(data: Wire, order: list[str], what: str, game: str) -> str:
    """The game's primary figure per match and rating (with a μ ± σ band)
    of every bot of a scope, over its matches; ``what`` names the scope
    ("the tournament")."""
    name, symbol = figure_words(game)
    bots = _ordered(data["points"], order)
    stars, ratings = [], []
    for b in bots:
        points = data["points"][b]
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
    stars_svg = line_chart(
        f"{name} per match over {what}", stars, ident="stars-all",
        x_label=f"matches of {what}, in the order they finished",
        y_label=f"{symbol} per match so far", y_range=_range(stars))
    ratings_svg = line_chart(f"Rating over {what}", ratings, ident="rating-all",
                             x_label=f"matches of {what}", y_label="rating μ")
    return (
        '<div class="charts">'
        f'<figure>{stars_svg}<figcaption>{name} per match of each bot so far, after each '
        f'of its matches.</figcaption>{legend(stars)}</figure>'
        f'<figure>{ratings_svg}<figcaption>Skill estimate μ of each bot after each of its '
        f'matches; the band is μ ± σ, its uncertainty.</figcaption>{legend(ratings)}'
        '</figure></div>')


def _range(lines: list[Series]) -> tuple[float, float]:
    """From 0 (or the lowest value, when a game scores below 0) to the top."""
    values = [y for s in lines for _, y in s.points] + [y for s in lines for _, y, _ in s.marks]
    return (min(0.0, min(values, default=0.0)), max(1.0, max(values, default=1.0)))


def bot_stars_chart(matches: list[MatchRecord], bot: str, game: str,
                    ident: str = "stars") -> str:
    """One bot's primary figure in each of its matches of ``game`` (dots)
    and its running mean."""
    name, symbol = figure_words(game)
    rows = bot_points(matches, bot, game)
    if not rows:
        return '<p class="empty">No finished matches in this scope.</p>'
    line = Series(bot, [(i, mean) for i, (_, _, mean) in enumerate(rows, start=1)],
                  marks=[(i, won, f"{mid}: {won}{'★' if symbol == '★' else ' ' + symbol}")
                         for i, (mid, won, _) in enumerate(rows, start=1)],
                  summary=f"{bot} won {sum(w for _, w, _ in rows)} {name.lower()} in "
                          f"{len(rows)} matches, {rows[-1][2]:.2f} per match.")
    return line_chart(f"{name} per match of {bot}", [line], ident=ident,
                      x_label="its matches (oldest → newest)",
                      y_label=f"{symbol} (dots: that match; line: so far)",
                      y_range=_range([line]))
