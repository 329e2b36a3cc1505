"""Thirteen cards as arrays: an arrangement chosen from a list per deal.

An arrangement of 13 cards into rows of 3, 5 and 5 has 72,072 possible
splits, too many for one fixed action space. The action is instead an
index into the seat's **candidates** for the deal: the ``candidates`` (16
by default) unfouled splits of its 13 cards with the highest objective of
the house arranger (``arena.games.thirteen.arranger.ranked_arrangements``:
the expected points of each row against a random hand of that size,
bonuses included), best first. Candidate 0 is the ``strong`` house bot's
arrangement. The list depends only on the seat's cards and the match's
``wheel`` and ``mid_full_house_bonus``, so a bot rebuilds it from its
request.

Features (``52 + 9 + 4 * candidates``): the seat's cards (52, canonical
order: hearts, spades, diamonds, clubs; 2 to ace), the totals of the seats
counted from this one (4, in hundreds of points), which of them have
arranged (4), the deal as a fraction of the match (1), then per candidate
its rows' expected points (front, middle, back) and 1 when it exists.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from arena.envs.codec import Observation, check_choice, observation_space
from arena.games.thirteen.arranger import RankedSplit, ranked_arrangements
from arena.games.thirteen.cards import CARD_INDEX, card_strs
from arena.games.thirteen.rules import ThirteenRules

DEFAULT_CANDIDATES = 16
SEATS = 4
_TOTALS, _ARRANGED, _DEAL, _CANDIDATES = 52, 56, 60, 61
PER_CANDIDATE = 4
# Far above any deal's points (a home run against three seats, doubled).
_POINTS_PER_DEAL = 1000


class ThirteenCodec:
    reward_kinds = frozenset({"showdown"})

    def __init__(self, rules: dict[str, Any] | None = None, candidates: int = DEFAULT_CANDIDATES) -> None:
        opts = ThirteenRules.from_dict(rules)
        if isinstance(candidates, bool) or not isinstance(candidates, int) or not 1 <= candidates <= 1024:
            raise ValueError(f"candidates must be an integer from 1 to 1024, not {candidates!r}")
        self.n_seats = opts.players
        self.n_deals = opts.deals
        self.wheel = opts.wheel
        self.mid_full_house_bonus = opts.mid_full_house_bonus
        self.k = candidates
        self.n_features = _CANDIDATES + PER_CANDIDATE * candidates
        high = opts.deals * _POINTS_PER_DEAL / 100
        self.observation_space = observation_space(self.n_features, -high, high, candidates)
        self.action_space = spaces.Discrete(candidates)
        self._cache: dict[tuple[str, ...], list[RankedSplit]] = {}

    def candidates(self, cards: list[str]) -> list[RankedSplit]:
        """The seat's candidate arrangements for these 13 cards, best first."""
        key = tuple(cards)
        found = self._cache.get(key)
        if found is None:
            if len(self._cache) >= 64:  # a few deals' hands: enough for every seat's turn
                self._cache.clear()
            hand = [CARD_INDEX[c] for c in cards]
            found = self._cache[key] = ranked_arrangements(hand, self.k, self.wheel, self.mid_full_house_bonus)
        return found

    def mask(self, phase: str, state: dict[str, Any]) -> np.ndarray:
        mask = np.zeros(self.k, dtype=np.int8)
        if phase == "arrange":
            mask[: len(self.candidates(state["cards"]))] = 1
        return mask

    def encode(self, phase: str, legal: Any, state: dict[str, Any]) -> Observation:
        x = np.zeros(self.n_features, dtype=np.float32)
        me, n = state["seat"], self.n_seats
        cards = state["cards"]
        for card in cards:
            x[CARD_INDEX[card]] = 1.0
        for seat in range(n):
            rel = (seat - me) % n
            x[_TOTALS + rel] = state["totals"][seat] / 100
            x[_ARRANGED + rel] = 1.0 if state["arranged"][seat] else 0.0
        x[_DEAL] = state["deal"] / state["deals"]
        mask = np.zeros(self.k, dtype=np.int8)
        if len(cards) == 13:
            found = self.candidates(cards)
            for i, ranked in enumerate(found):
                at = _CANDIDATES + PER_CANDIDATE * i
                x[at:at + 3] = ranked.values
                x[at + 3] = 1.0
            if phase == "arrange":
                mask[: len(found)] = 1
        return {"observation": x, "action_mask": mask}

    def decode(self, action: int, phase: str, legal: Any, state: dict[str, Any],
               mask: np.ndarray | None = None) -> dict[str, list[str]]:
        index = check_choice(action, self.mask(phase, state) if mask is None else mask)
        split = self.candidates(state["cards"])[index].split
        return {"front": card_strs(split.front), "middle": card_strs(split.middle), "back": card_strs(split.back)}

    def rewards(self, event: dict[str, Any]) -> list[float] | None:
        """Each showdown's points (zero-sum; they add up to the match totals)."""
        if event["kind"] != "showdown":
            return None
        return [float(v) for v in event["scores"]]
