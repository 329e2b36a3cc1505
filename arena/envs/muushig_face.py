"""Muushig observations and masks read from the engine's own state.

The environment's reference encoding is :class:`~arena.envs.muushig_codec.
MuushigCodec` over the wire request (phase, legal list, ``observation(seat)``
dict), the one a protocol bot builds. Per step that path makes the
seat's state dict and legal strings only to turn them back into the
numbers the engine holds, and cost about 90 % of an environment step. This
face reads the same numbers from the engine directly -- the seat's own
card mask, the public table state, the fast API's legal codes -- and
writes them into fresh rows (:class:`~arena.envs.codec.Rows`). What it may
read is what ``arena.games.muushig.views.observe`` puts in that seat's
view and nothing else (another seat's hand, the stock's order and the
discards are never touched); ``tests/envs/test_env_faces.py`` holds it equal
to the reference encoding at every step of random matches under every rule
option.

An action index is the engine's fast code plus the phase's base (the codec
was numbered so), so a step is ``apply_code(index - base)`` with no wire
string made or parsed.
"""

from __future__ import annotations

from array import array
from typing import Any

import numpy as np

from arena.envs.codec import Observation, Rows, check_choice
from arena.envs.muushig_codec import MuushigCodec
from arena.envs.muushig_layout import (CARDS as _CARDS, DEALER as _DEALER, DECIDE_BASE, EXCHANGE_BASE,
                                       EXCHANGES as _EXCHANGES, FACE_UP as _FACE_UP, LEADER as _LEADER,
                                       N_ACTIONS, N_FEATURES, PHASE as _PHASE, PLAY_BASE, PLAYED as _PLAYED,
                                       SCALARS as _SCALARS, SCORES as _SCORES, STARS as _STARS,
                                       STATUS as _STATUS, TAKE_BASE, TO_ACT as _TO_ACT, TRICK as _TRICK,
                                       TRICKS as _TRICKS, TRUMP as _TRUMP)
from arena.games.muushig import MuushigEngine
from arena.games.muushig.cards import mask_cards
from arena.games.muushig.phases import HAND_SIZE, START_SCORE
from arena.games.muushig.state import HandState

# Action index = code + the base of the pending stage (DECIDE, EXCHANGE,
# TAKE, PLAY): the take code of "decline" is -1, so take's base is one on.
BASES = (DECIDE_BASE, EXCHANGE_BASE, TAKE_BASE + 1, PLAY_BASE)


class MuushigFace:
    """Observes a seat and applies an index, for one environment."""

    def __init__(self, codec: MuushigCodec) -> None:
        self.n_seats = codec.n_seats
        self.n_rounds = codec.n_rounds
        self.max_hands = codec.max_hands
        self._features = Rows(N_FEATURES, np.float32)
        self._masks = Rows(N_ACTIONS, np.int8)
        # Per seat, the features that change only when a trick ends (or a
        # hand, a round, the deciding and exchanging): a decision copies
        # them at once and writes the few that move every step.
        n = self.n_seats
        self._templates: list[_Template | None] = [None] * n
        self._rel = [[(seat, (seat - me) % n) for seat in range(n)] for me in range(n)]
        self._rel_of = [[(seat - me) % n for seat in range(n)] for me in range(n)]

    def observe(self, engine: Any, seat: int, acting: bool) -> Observation:
        e: MuushigEngine = engine
        mask, mask_flat = self._masks.take()
        if acting:
            self.write_mask(e, mask_flat, 0)
        row, row_flat = self._features.take()
        self.write_features(e, seat, row_flat, 0)
        return {"observation": row, "action_mask": mask}

    def apply(self, engine: Any, seat: int, action: Any, mask: np.ndarray | None) -> Any:
        e: MuushigEngine = engine
        if mask is None:
            mask, mask_flat = self._masks.take()
            self.write_mask(e, mask_flat, 0)
        # A plain int in range whose mask entry is set needs none of
        # check_choice's conversions (NumPy integers and errors go there).
        if type(action) is int and 0 <= action < N_ACTIONS and mask[action]:
            return e.apply_code(action - BASES[e.stage])
        return e.apply_code(check_choice(action, mask) - BASES[e.stage])

    # ------------------------------------------------------------ rows
    # Both write into a flat buffer at an offset: a row of the single
    # environment's blocks (``Rows``) or a table's row of the vector
    # environment's arrays (``muushig_vector``), so both give the same arrays.
    def write_mask(self, e: MuushigEngine, flat: Any, at: int) -> None:
        """Set the legal actions of the pending decision in a zeroed row."""
        at += BASES[e.stage]
        for code in e.legal_codes():
            flat[at + code] = 1

    def write_features(self, e: MuushigEngine, me: int, x: Any, o: int) -> None:
        """Write all ``N_FEATURES`` of ``me``'s observation (the row need not
        be zeroed: the kept template overwrites all of it first)."""
        hand, n = e.hand, self.n_seats
        stage = e.stage
        settled = stage >= 2  # TAKE, PLAY, OVER: every status and exchange is final for the hand
        kept = self._templates[me]
        if kept is None or kept.hand is not hand or kept.round != e.round_number:
            kept = self._template(e, me)
        if kept.played != len(hand.played):
            self._tricks_since(e, me, kept)
        if settled and not kept.settled:
            self._settle(e, me, kept)
        x[o:o + N_FEATURES] = kept.view
        # What changes between two decisions of the same template.
        for c in mask_cards(hand.hands[me]):
            x[o + c] = 1.0  # _CARDS
        for _, c in hand.trick:
            x[o + _TRICK + c] = 1.0
        to_act = e.current_seat
        if to_act is not None:
            x[o + _PHASE + stage] = 1.0
            x[o + _TO_ACT + (to_act - me) % n] = 1.0
            if stage == 1:  # EXCHANGE: the most this seat may discard
                x[o + _SCALARS + 1] = hand.exchange_limit / HAND_SIZE
        leader = hand.leader
        if leader is not None:
            x[o + _LEADER + (leader - me) % n] = 1.0
        if not settled:
            status, exchanges = hand.status, hand.exchanges
            for seat, rel in self._rel[me]:
                x[o + _STATUS + 3 * rel + status[seat]] = 1.0
                done = exchanges[seat]
                x[o + _EXCHANGES + rel] = -1.0 if done is None else done / HAND_SIZE
        x[o + _SCALARS] = (len(hand.stock) - hand.stock_drawn) / 32
        if hand.face_up_taken:
            x[o + _SCALARS + 2] = 1.0

    # Per seat, the features that change only when a trick ends, a hand or
    # a round ends, or every seat has decided and exchanged: kept, and
    # brought up to date by what happened since the seat last asked.
    def _template(self, e: MuushigEngine, me: int) -> _Template:
        hand, rounds = e.hand, self.n_rounds
        x = array("f", bytes(4 * N_FEATURES))
        x[_FACE_UP + hand.face_up] = 1.0
        x[_TRUMP + hand.trump] = 1.0
        x[_DEALER + (e.dealer - me) % self.n_seats] = 1.0
        stars = e.stars
        for seat, rel in self._rel[me]:
            x[_STARS + rel] = stars[seat] / rounds
        x[_SCALARS + 3] = min(e.round_number, rounds - 1) / rounds
        x[_SCALARS + 4] = e.hand_number / self.max_hands
        self._scores_and_tricks(e, me, x)
        kept = self._templates[me] = _Template(hand, e.round_number, x)
        return kept

    def _tricks_since(self, e: MuushigEngine, me: int, kept: _Template) -> None:
        """The tricks finished since: their cards; the winner's score and
        tricks (a trick changes no other seat's), all seats' after the last
        trick (the muushig bonus)."""
        x, hand = kept.features, e.hand
        played, rel, scores, tricks = hand.played, self._rel_of[me], e.scores, hand.tricks
        for _, cards, winner in played[kept.played:]:
            for _, c in cards:
                x[_PLAYED + c] = 1.0
            x[_SCORES + rel[winner]] = scores[winner] / START_SCORE
            x[_TRICKS + rel[winner]] = tricks[winner] / HAND_SIZE
        kept.played = len(played)
        if kept.played == HAND_SIZE:
            self._scores_and_tricks(e, me, x)

    def _settle(self, e: MuushigEngine, me: int, kept: _Template) -> None:
        x, hand = kept.features, e.hand
        status, exchanges = hand.status, hand.exchanges
        for seat, rel in self._rel[me]:
            x[_STATUS + 3 * rel + status[seat]] = 1.0
            done = exchanges[seat]
            x[_EXCHANGES + rel] = -1.0 if done is None else done / HAND_SIZE
        kept.settled = True

    def _scores_and_tricks(self, e: MuushigEngine, me: int, x: array[float]) -> None:
        scores, tricks = e.scores, e.hand.tricks
        for seat, rel in self._rel[me]:
            x[_SCORES + rel] = scores[seat] / START_SCORE
            x[_TRICKS + rel] = tricks[seat] / HAND_SIZE


class _Template:
    """One seat's slowly changing features and what they were made from."""

    __slots__ = ("hand", "round", "played", "settled", "features", "view")

    def __init__(self, hand: HandState, round: int, features: array[float]) -> None:
        self.hand, self.round = hand, round
        self.played, self.settled = 0, False
        self.features, self.view = features, memoryview(features)
