"""Muushig as arrays: 191 features, 99 actions (see docs/envs.md).

The actions, one fixed numbering for every phase:

* ``0`` fold, ``1`` enter (decide);
* ``2 + code`` exchange, ``code`` a bit set over the positions of the
  seat's cards in canonical order (bit i: discard the i-th card), 32 codes;
* ``34`` decline the face-up card, ``35 + c`` take it giving up card ``c``;
* ``67 + c`` play card ``c``;

where ``c`` is a card's index in the rules' canonical order (hearts,
spades, diamonds, clubs; 7 to ace), 0..31. Seats in the features are
counted from the observing seat (0 = itself, 1 = the next seat...).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from arena.envs.codec import IllegalChoiceError, Observation, check_choice, observation_space
from arena.games.muushig.cards import CARD_INDEX, CARD_STR, SUITS
from arena.games.muushig.options import MuushigRules
from arena.games.muushig.phases import HAND_SIZE, PHASES, START_SCORE, STATUS_NAMES

from arena.envs.muushig_layout import (CARDS as _CARDS, DEALER as _DEALER, DECIDE_BASE, EXCHANGE_BASE,
                                       EXCHANGES as _EXCHANGES, FACE_UP as _FACE_UP, LEADER as _LEADER,
                                       N_ACTIONS, N_FEATURES, PHASE as _PHASE, PLAY_BASE, PLAYED as _PLAYED,
                                       SCALARS as _SCALARS, SCORES as _SCORES, SEATS, STARS as _STARS,
                                       STATUS as _STATUS, TAKE_BASE, TO_ACT as _TO_ACT, TRICK as _TRICK,
                                       TRUMP as _TRUMP)

_STATUS_INDEX = {name: i for i, name in enumerate(STATUS_NAMES)}
_PHASE_INDEX = {name: i for i, name in enumerate(PHASES)}


class MuushigCodec:
    reward_kinds = frozenset({"round_end"})

    def __init__(self, rules: dict[str, Any] | None = None) -> None:
        opts = MuushigRules.from_dict(rules)
        self.n_seats = opts.players
        self.n_rounds = opts.n_rounds
        self.max_hands = opts.max_hands
        # A score only grows by the muushig bonus, once per hand at most.
        high = (START_SCORE + 5 * opts.max_hands) / START_SCORE
        self.observation_space = observation_space(N_FEATURES, -1.0, high, N_ACTIONS)
        self.action_space = spaces.Discrete(N_ACTIONS)

    # --------------------------------------------------------- masks
    def _index(self, phase: str, action: Any, cards: list[str]) -> int:
        if phase == "play":
            return PLAY_BASE + CARD_INDEX[action]
        if phase == "decide":
            return DECIDE_BASE + (1 if action == "enter" else 0)
        if phase == "take":
            return TAKE_BASE if action is None else TAKE_BASE + 1 + CARD_INDEX[action]
        code = 0
        for card in action:
            code |= 1 << cards.index(card)
        return EXCHANGE_BASE + code

    def mask(self, phase: str, legal: list[Any], state: dict[str, Any]) -> np.ndarray:
        mask = np.zeros(N_ACTIONS, dtype=np.int8)
        if phase == "play":  # the usual request: cards only
            mask[[PLAY_BASE + CARD_INDEX[card] for card in legal]] = 1
        elif legal:
            cards = state["cards"]
            mask[[self._index(phase, action, cards) for action in legal]] = 1
        return mask

    # ---------------------------------------------------- observation
    def encode(self, phase: str, legal: list[Any], state: dict[str, Any]) -> Observation:
        # The one-hot features as a list of indices set at once: a numpy
        # store per feature would cost more than the engine's step.
        me, n = state["seat"], self.n_seats
        ones = [_CARDS + CARD_INDEX[card] for card in state["cards"]]
        ones.append(_FACE_UP + CARD_INDEX[state["face_up"]])
        ones += [_TRICK + CARD_INDEX[card] for _, card in state["trick"]]
        for trick in state["played"]:
            ones += [_PLAYED + CARD_INDEX[card] for _, card in trick["cards"]]
        ones.append(_TRUMP + SUITS.index(state["trump"]))
        if state["phase"] is not None:
            ones.append(_PHASE + _PHASE_INDEX[state["phase"]])
        ones.append(_DEALER + (state["dealer"] - me) % n)
        if state["to_act"] is not None:
            ones.append(_TO_ACT + (state["to_act"] - me) % n)
        if state["leader"] is not None:
            ones.append(_LEADER + (state["leader"] - me) % n)
        status, scores, stars, tricks = state["status"], state["scores"], state["stars"], state["tricks"]
        exchanges = state["exchanges"]
        values = [0.0] * (_DEALER - _SCORES)  # scores, stars, tricks, exchanges by relative seat
        for seat in range(n):
            rel = (seat - me) % n
            ones.append(_STATUS + 3 * rel + _STATUS_INDEX[status[seat]])
            values[rel] = scores[seat] / START_SCORE
            values[SEATS + rel] = stars[seat] / self.n_rounds
            values[2 * SEATS + rel] = tricks[seat] / HAND_SIZE
            # None: not (yet) asked; else how many cards it exchanged.
            values[3 * SEATS + rel] = -1.0 if exchanges[seat] is None else exchanges[seat] / HAND_SIZE
        x = np.zeros(N_FEATURES, dtype=np.float32)
        x[ones] = 1.0
        x[_SCORES:_DEALER] = values
        x[_SCALARS:] = (state["stock"] / 32, (state["max_discard"] or 0) / HAND_SIZE,
                        1.0 if state["face_up_taken"] else 0.0, state["round"] / self.n_rounds,
                        state["hand"] / self.max_hands)
        return {"observation": x, "action_mask": self.mask(phase, legal, state)}

    # -------------------------------------------------------- actions
    def decode(self, action: int, phase: str, legal: list[Any], state: dict[str, Any],
               mask: np.ndarray | None = None) -> Any:
        index = check_choice(action, self.mask(phase, legal, state) if mask is None else mask)
        if phase == "decide":
            return "enter" if index == DECIDE_BASE + 1 else "fold"
        if phase == "exchange":
            code = index - EXCHANGE_BASE
            return [card for i, card in enumerate(state["cards"]) if code >> i & 1]
        if phase == "take":
            return None if index == TAKE_BASE else CARD_STR[index - TAKE_BASE - 1]
        if phase == "play":
            return CARD_STR[index - PLAY_BASE]
        raise IllegalChoiceError(f"no Muushig phase {phase!r}")

    def rewards(self, event: dict[str, Any]) -> list[float] | None:
        """A star (+1) to the winner of each round: the sum over a match is
        its stars, what ranks Muushig matches first."""
        if event["kind"] != "round_end":
            return None
        rewards = [0.0] * self.n_seats
        rewards[event["winner"]] = 1.0
        return rewards
