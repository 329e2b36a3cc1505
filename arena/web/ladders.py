"""Which game a request is about, and how a game's standings are drawn.

Standings rank one game at a time, so every standings view names its game:
``?game=`` where the visitor chooses, else the server's default game (the
one its bots play unless they ask for another), else the first registered
game. The columns of a game's standings table come from its ranking
descriptor (``GameSpec.extra["standings"]``, read by
:mod:`arena.tournament.ranking`): the web names no game.
"""

from __future__ import annotations

import collections
from collections.abc import Iterable
from dataclasses import dataclass

from arena.games import UnknownGameError, game_names, get_game
from arena.storage.base import MatchRecord
from arena.tournament.ranking import RankingSpec, RankingSpecError, ranking_for

# Headers of the standings-row fields that carried the sums before games
# described themselves: tables of the games that fill them look as they did.
FIELD_HEADERS = {
    "stars": ("★", "Stars (rounds won)"),
    "score_sum": ("Score sum", "Sum of final round scores (lower is better)"),
    "stars_per_match": ("★/match", "Stars per match, with 95% interval"),
}
FIELD_NOTE = "Ranked by stars (★), then by the lower score sum."


class UnknownGameParamError(ValueError):
    """``?game=`` names no game this server serves."""


def known_games() -> list[str]:
    return sorted(game_names())


def fallback_game() -> str:
    """The game shown when nothing names one: the first registered, by name."""
    return known_games()[0]


def default_game(server_info: dict[str, object]) -> str:
    """The server's default game (``server_info["game"]``), if registered,
    else :func:`fallback_game`."""
    named = server_info.get("game")
    return named if isinstance(named, str) and named in known_games() else fallback_game()


def check_game(raw: str | None, default: str) -> str:
    """``raw`` (a query value) as a game name, or ``default`` when absent."""
    if raw is None or raw == "":
        return default
    games = known_games()
    if raw not in games:
        raise UnknownGameParamError(f"query parameter 'game' must be one of {', '.join(games)}; "
                                    f"got {raw[:40]!r}")
    return raw


def ladder_games(default: str) -> list[str]:
    """Every game served, the default first (the order of the home page)."""
    return [default] + [g for g in known_games() if g != default]


def game_title(game: str) -> str:
    """A game's name for headings: its spec's title if it has one."""
    try:
        spec = get_game(game)
    except UnknownGameError:
        return game
    return str(getattr(spec, "title", "") or game.capitalize())


@dataclass(frozen=True)
class Column:
    key: str  # a standings-row field, or "figures.<result key>"
    header: str
    title: str
    ci: tuple[str, str] | None = None  # row fields of the interval shown beside it


@dataclass(frozen=True)
class FigureColumns:
    """The game's own columns of a standings table (between Matches and Wins),
    the ranking sentence of its legend and the name of its primary figure."""

    columns: tuple[Column, ...]
    note: str
    points_name: str
    per_match_key: str  # row field of the primary figure per match


def _key_column(spec: RankingSpec, index: int) -> Column:
    k = spec.keys[index]
    if k.field is not None and k.field in FIELD_HEADERS:
        header, title = FIELD_HEADERS[k.field]
        return Column(k.field, header, title)
    if index == 0:
        return Column("points", k.label, f"{k.label}: the sum over the bot's matches")
    better = "more is better" if k.descending else "lower is better"
    return Column(f"figures.{k.key}", k.label, f"{k.label} ({better})")


def figure_columns(game: str | None) -> FigureColumns:
    """The columns of ``game``'s standings (the fallback game's if unknown)."""
    try:
        spec = ranking_for(str(game))
    except (UnknownGameError, RankingSpecError):
        spec = ranking_for(fallback_game())
    first = _key_column(spec, 0)
    p = spec.per_match_prefix
    if p is not None and f"{p}_per_match" in FIELD_HEADERS:
        header, title = FIELD_HEADERS[f"{p}_per_match"]
        per_match = Column(f"{p}_per_match", header, title, (f"{p}_ci_low", f"{p}_ci_high"))
    else:
        label = spec.primary.label
        per_match = Column("points_per_match", f"{label}/match",
                           f"{label} per match, with 95% interval",
                           ("points_ci_low", "points_ci_high"))
    rest = tuple(_key_column(spec, i) for i in range(1, len(spec.keys)))
    legacy = all(k.field in FIELD_HEADERS for k in spec.keys)
    note = FIELD_NOTE if legacy else spec.note
    return FigureColumns((first, per_match, *rest), note, spec.points_name, per_match.key)


@dataclass(frozen=True)
class PrimaryResult:
    """Where a match result holds the game's primary figure per seat, and
    how a number of it is written ("3★", "12 points")."""

    result_key: str
    suffix: str


def primary_result(game: str | None) -> PrimaryResult:
    try:
        spec = ranking_for(str(game))
    except (UnknownGameError, RankingSpecError):
        spec = ranking_for(fallback_game())
    k = spec.primary
    suffix = FIELD_HEADERS[k.field][0] if k.field in FIELD_HEADERS else f" {spec.points_name}"
    return PrimaryResult(k.key, suffix)


def main_game(matches: Iterable[MatchRecord | None]) -> str | None:
    """The game most of ``matches`` are of (a hosted version's figures are
    of one game: standings never mix games)."""
    counts = collections.Counter(m.game for m in matches if m is not None)
    return counts.most_common(1)[0][0] if counts else None
