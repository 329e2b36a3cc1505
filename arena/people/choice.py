"""Who sits at a person's table: the person's choice, checked (pure logic).

The requirement: house bots at once, or bots waiting in the lobby whose
hello opted in to playing people. So a person chooses

* ``house``: house bots in every other seat, of the strategy they pick
  (``house``; the game's list is weakest first, ``house_strength`` in its
  spec), none from the lobby;
* ``lobby``: bots from the lobby that opted in -- the ones named in
  ``bots``, else the longest waiting -- at least one of them, house bots
  filling the seats left;
* ``any`` (the default, and what an empty body means): opted-in lobby bots
  if some are waiting, house bots for the rest.

A bot that did not opt in is never among them (``Lobby.for_people``).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from arena.games.base import GameSpec

MAX_NAMED = 8  # more than any table has seats


class ChoiceError(ValueError):
    """A choice that is not well formed; the message says what would be."""


class Opponents(enum.Enum):
    ANY = "any"
    HOUSE = "house"
    LOBBY = "lobby"


@dataclass(frozen=True)
class TableChoice:
    opponents: Opponents = Opponents.ANY
    house: str | None = None  # the house strategy; None: the server's own
    bots: tuple[str, ...] = ()  # LOBBY: these bots (empty: the longest waiting)

    @classmethod
    def from_wire(cls, body: Any, spec: GameSpec) -> "TableChoice":
        """The choice a request's JSON body holds (None or {} : ``any``)."""
        if body is None:
            return cls()
        if not isinstance(body, dict):
            raise ChoiceError("the body must be a JSON object such as "
                              '{"opponents": "house", "house": "random"}, or nothing')
        raw = body.get("opponents", "any")
        try:
            opponents = Opponents(raw)
        except ValueError:
            raise ChoiceError(f"opponents must be one of {', '.join(o.value for o in Opponents)}"
                              f" (house bots, bots from the lobby, or either); got {raw!r:.40}"
                              ) from None
        house = body.get("house")
        strategies = house_strategies(spec)
        if house is not None and house not in strategies:
            raise ChoiceError(f"house must be one of {game_house_list(spec)} for "
                              f"{spec.name}; got {house!r:.40}")
        bots = body.get("bots", [])
        if not isinstance(bots, list) or len(bots) > MAX_NAMED or \
                not all(isinstance(b, str) and 0 < len(b) <= 64 for b in bots):
            raise ChoiceError(f"bots must be a list of at most {MAX_NAMED} bot names")
        if bots and opponents is not Opponents.LOBBY:
            raise ChoiceError('bots names bots from the lobby: send it with "opponents": "lobby"')
        return cls(opponents, house, tuple(dict.fromkeys(bots)))


def house_strategies(spec: GameSpec) -> list[str]:
    """The game's house strategies, weakest first (as far as the game says)."""
    order = [s for s in spec.extra.get("house_strength", []) if s in spec.house_bots]
    return order + sorted(s for s in spec.house_bots if s not in order)


def game_house_list(spec: GameSpec) -> str:
    return ", ".join(house_strategies(spec))
