"""How a game's results rank bots: the game's own description, read here.

Every game says in ``GameSpec.extra["standings"]`` which numbers of its
match ``result`` the standings sum up, in which order they rank, and where
the places are (see :func:`parse_ranking` for the format). The standings,
the separation test and the exports read only this description, so a new
game ranks without a line of game-specific code in the tournament package.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Mapping

from arena.games import get_game
from arena.tournament.errors import TournamentError

ORDERS = ("desc", "asc")


class RankingSpecError(TournamentError, ValueError):
    """A game's standings description is missing or malformed."""


@dataclass(frozen=True)
class RankKey:
    """One number per seat in a match's result, summed over a bot's matches."""

    key: str  # the result key (a list with one number per seat)
    descending: bool  # True: more is better
    label: str  # its name in tables
    field: str | None = None  # a standings-row field that also carries the sum


@dataclass(frozen=True)
class RankingSpec:
    """A game's ranking: ``keys[0]`` is the primary figure (its per-match
    mean gets the confidence interval, neighbours are tested on it); later
    keys only break ties."""

    game: str
    keys: tuple[RankKey, ...]
    places: str  # result key of the 1-based places (shared places allowed)
    points_name: str  # what the primary figure is called ("stars", "points")
    note: str  # the ranking rule in one sentence, for page legends
    # Prefix of row fields that also carry the primary figure's per-match mean
    # and interval (``<prefix>_per_match``, ``<prefix>_ci_low/high``), if any.
    per_match_prefix: str | None = None

    @property
    def primary(self) -> RankKey:
        return self.keys[0]

    def row_fields(self) -> tuple[str, ...]:
        """The optional standings-row fields this game fills."""
        names = [k.field for k in self.keys if k.field is not None]
        if self.per_match_prefix is not None:
            p = self.per_match_prefix
            names += [f"{p}_per_match", f"{p}_ci_low", f"{p}_ci_high"]
        return tuple(names)

    def sort_key(self, figures: Mapping[str, float]) -> tuple[float, ...]:
        """Smaller sorts first: the better bot."""
        return tuple(-figures[k.key] if k.descending else figures[k.key] for k in self.keys)


def parse_ranking(game: str, descriptor: Any) -> RankingSpec:
    """Read a ``GameSpec.extra["standings"]`` descriptor::

        {"rank_by": [{"key": "stars", "order": "desc", "label": "Stars",
                      "field": "stars"},                   # field: optional
                     {"key": "sums", "order": "asc", "label": "Score sum",
                      "field": "score_sum"}],
         "places": "ranks",
         "points_name": "stars",
         "note": "Ranked by stars, then by the lower score sum.",
         "per_match_prefix": "stars"}                      # optional
    """
    where = f"game {game!r}: GameSpec.extra['standings']"
    if not isinstance(descriptor, Mapping):
        raise RankingSpecError(f"{where} is missing; a game must say how its results rank "
                               "(see arena.tournament.ranking.parse_ranking)")
    rank_by = descriptor.get("rank_by")
    if not isinstance(rank_by, list) or not rank_by:
        raise RankingSpecError(f"{where}['rank_by'] must be a non-empty list")
    keys = []
    for i, entry in enumerate(rank_by):
        if not isinstance(entry, Mapping) or not isinstance(entry.get("key"), str):
            raise RankingSpecError(f"{where}['rank_by'][{i}] needs a 'key' naming a result key")
        order = entry.get("order", "desc")
        if order not in ORDERS:
            raise RankingSpecError(f"{where}['rank_by'][{i}]['order'] must be 'desc' or 'asc', "
                                   f"not {order!r}")
        keys.append(RankKey(key=entry["key"], descending=order == "desc",
                            label=str(entry.get("label", entry["key"])),
                            field=entry.get("field")))
    places = descriptor.get("places", "ranks")
    if not isinstance(places, str):
        raise RankingSpecError(f"{where}['places'] must name the result key of the places")
    return RankingSpec(game=game, keys=tuple(keys), places=places,
                       points_name=str(descriptor.get("points_name", keys[0].label)),
                       note=str(descriptor.get("note", "")),
                       per_match_prefix=descriptor.get("per_match_prefix"))


@lru_cache(maxsize=None)
def ranking_for(game: str) -> RankingSpec:
    """The ranking of registered game ``game`` (UnknownGameError if none)."""
    return parse_ranking(game, get_game(game).extra.get("standings"))
