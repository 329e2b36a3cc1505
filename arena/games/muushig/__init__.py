"""Muushig, the Mongolian five-seat trick-taking game (the arena's rules page).

``SPEC`` registers the game with the arena; ``MuushigEngine`` is the pure
state machine; ``replay`` re-runs a stored match.
"""

from __future__ import annotations

import random
from typing import Any

from arena.games.base import GameSpec
from arena.games.muushig.bots import HOUSE_BOTS
from arena.games.muushig.engine import MuushigEngine
from arena.games.muushig.options import MuushigRules
from arena.games.muushig.phases import Phase
from arena.games.muushig.replay import (
    ReplayError,
    inputs_from_record,
    replay,
    replay_record,
    replay_steps,
)

__all__ = [
    "SPEC",
    "MuushigEngine",
    "MuushigRules",
    "Phase",
    "ReplayError",
    "inputs_from_record",
    "new_match",
    "replay",
    "replay_record",
]


def new_match(
    rules: dict[str, Any] | None, rng: random.Random | None, decks: list[list[str]] | None
) -> MuushigEngine:
    return MuushigEngine(rules, rng, decks)


SPEC = GameSpec(
    name="muushig",
    n_seats=5,
    new_match=new_match,
    house_bots=dict(HOUSE_BOTS),
    default_house_bot="heuristic",
    description=(
        "Muushig: 5 seats, 32 cards, 5 rounds. Enter or fold, exchange with the stock, "
        "then win tricks: each trick −1, an entered seat with no trick +5; "
        "the first score at 0 or below wins the round."
    ),
    extra={
        "rule_defaults": MuushigRules().as_dict(),
        # The house strategies weakest first (a person picks a strength).
        "house_strength": ["random", "heuristic"],
        # How standings rank bots over matches of this game (arena.tournament.ranking):
        # the match rule summed over matches. ``field`` names the standings-row
        # fields that carried these sums before games described themselves.
        "standings": {
            "rank_by": [{"key": "stars", "order": "desc", "label": "Stars", "field": "stars"},
                        {"key": "sums", "order": "asc", "label": "Score sum",
                         "field": "score_sum"}],
            "places": "ranks",
            "points_name": "stars",
            "note": "Ranked by stars (rounds won), then by the lower sum of final scores.",
            "per_match_prefix": "stars",
        },
        # How the web's match page draws a match of this game (arena.web.pages).
        "web": {
            # The rules page (/rules?game=NAME renders this file) and where
            # the protocol page describes this game's messages.
            "rules": "seeds/muushig.md",
            "protocol": "/protocol",
            "replay_script": "replay.js",
            "result_columns": [["ranks", "Place"], ["stars", "★"], ["sums", "Score sum"]],
        },
    },
    replay_inputs=replay_steps,
)
