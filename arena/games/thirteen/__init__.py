"""Thirteen cards (Chinese poker), the arena's second game.

``SPEC`` registers the game with the arena; ``ThirteenEngine`` is the pure
state machine (every seat arranges at once: see its seat-addressed API);
``replay`` re-runs a stored match. The rules page is ``seeds/thirteen.md``.
"""

from __future__ import annotations

import random
from typing import Any

from arena.games.base import GameSpec
from arena.games.thirteen.bots import HOUSE_BOTS
from arena.games.thirteen.engine import ARRANGE, ThirteenEngine
from arena.games.thirteen.replay import ReplayError, inputs_from_record, replay, replay_record
from arena.games.thirteen.rules import ThirteenRules

__all__ = [
    "ARRANGE",
    "SPEC",
    "ReplayError",
    "ThirteenEngine",
    "ThirteenRules",
    "inputs_from_record",
    "new_match",
    "replay",
    "replay_record",
]


def new_match(
    rules: dict[str, Any] | None, rng: random.Random | None, decks: list[list[str]] | None
) -> ThirteenEngine:
    return ThirteenEngine(rules, rng, decks)


SPEC = GameSpec(
    name="thirteen",
    n_seats=4,
    new_match=new_match,
    house_bots=dict(HOUSE_BOTS),
    default_house_bot="strong",
    description=(
        "Thirteen cards (Chinese poker): 4 seats, 52 cards, 13 each. Every seat arranges its hand "
        "at once into a front of 3, a middle of 5 and a back of 5 (front <= middle <= back); "
        "each pair of seats scores segment by segment, with bonuses, shots and home runs."
    ),
    extra={
        "rule_defaults": ThirteenRules().as_dict(),
        # The house strategies weakest first (a person picks a strength).
        "house_strength": ["random", "strong"],
        "phases": [ARRANGE],
        # How standings rank bots over matches of this game (arena.tournament.ranking).
        "standings": {
            "rank_by": [{"key": "totals", "order": "desc", "label": "Points"}],
            "places": "ranks",
            "points_name": "points",
            "note": "Ranked by total points over all deals of all matches.",
        },
        # How the web's match page draws a match of this game (arena.web.pages).
        "web": {
            # The rules page (/rules?game=NAME renders this file) and where
            # the protocol page describes this game's messages.
            "rules": "seeds/thirteen.md",
            "protocol": "/protocol#8-the-thirteen-card-game",
            "replay_script": "replay_thirteen.js",
            "result_columns": [["ranks", "Place"], ["totals", "Points"]],
        },
    },
    replay_inputs=inputs_from_record,  # each arrangement names its seat
)
