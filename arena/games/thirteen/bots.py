"""House bots: they fill empty seats and take over dropped ones.

Each is a ``HouseBot``: ``(phase, constraints, state) -> action`` over
exactly what a remote bot receives (the request's ``constraints`` and
``state``, whose ``cards`` are the seat's own 13), so a house bot can never
use hidden information. Factories take their own ``random.Random``.

* ``random``: a uniformly random *unfouled* arrangement.
* ``strong``: the best of the 72,072 splits by the objective documented in
  ``arena.games.thirteen.arranger`` (expected points per segment against a
  random hand of that size, bonuses included); the server's default action.

Both read the match's ``wheel`` and ``mid_full_house_bonus`` from the rules
the factory is given (``match_start.rules``). Made without rules, they keep
to arrangements unfouled under either ``wheel`` value, so they never foul
whatever the match's flag.
"""

from __future__ import annotations

import random
from typing import Any

from arena.games.base import HouseBot
from arena.games.thirteen.arranger import Split, best_arrangement, random_valid_arrangement
from arena.games.thirteen.cards import CARD_INDEX, card_strs


def _hand(state: dict[str, Any]) -> tuple[int, ...]:
    return tuple(CARD_INDEX[c] for c in state["cards"])


def _wire(split: Split) -> dict[str, list[str]]:
    return {"front": card_strs(split.front), "middle": card_strs(split.middle), "back": card_strs(split.back)}


def make_random(rng: random.Random, rules: dict[str, Any] | None = None) -> HouseBot:
    wheel = (rules or {}).get("wheel", "lowest")
    any_wheel = rules is None or "wheel" not in rules

    def bot(phase: str, options: Any, state: dict[str, Any]) -> Any:
        return _wire(random_valid_arrangement(_hand(state), rng, wheel, any_wheel=any_wheel))

    return bot


def make_strong(rng: random.Random, rules: dict[str, Any] | None = None) -> HouseBot:
    any_wheel = rules is None or "wheel" not in rules
    rules = rules or {}
    wheel = rules.get("wheel", "lowest")
    mfh = rules.get("mid_full_house_bonus", 2)

    def bot(phase: str, options: Any, state: dict[str, Any]) -> Any:
        return _wire(best_arrangement(_hand(state), wheel, mfh, any_wheel=any_wheel))

    return bot


HOUSE_BOTS = {"random": make_random, "strong": make_strong}
