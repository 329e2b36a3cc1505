"""Muushig observations and masks read from the engine's own state.

The environment's reference encoding is :class:`~arena.envs.muushig_codec.
MuushigCodec` over the wire request (phase, legal list, ``observation(seat)``
dict), the one a protocol bot builds. Per step that path makes the
seat's state dict and legal strings only to turn them back into the
numbers the engine holds, and cost about 90 % of an environment step. This
face reads the same numbers from the engine directly -- the seat's own
card mask, the public table state, the fast API's legal codes -- and
describes the row in ints (:class:`RowParts`), which the single
environment writes into fresh rows (:class:`~arena.envs.codec.Rows`) and
the vector environment into all tables' rows at once. What it may
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
from typing import Any, Final

import numpy as np

from arena.envs.codec import Observation, Rows, check_choice, row_views
from arena.envs.muushig_codec import MuushigCodec
from arena.envs.muushig_layout import (CARDS as _CARDS, DEALER as _DEALER, DECIDE_BASE, EXCHANGE_BASE,
                                       EXCHANGES as _EXCHANGES, FACE_UP as _FACE_UP, LEADER as _LEADER,
                                       N_ACTIONS, N_FEATURES, PHASE as _PHASE, PLAY_BASE, PLAYED as _PLAYED,
                                       SCALARS as _SCALARS, SCORES as _SCORES, STARS as _STARS,
                                       STATUS as _STATUS, TAKE_BASE, TO_ACT as _TO_ACT, TRICK as _TRICK,
                                       TRICKS as _TRICKS, TRUMP as _TRUMP)
from arena.games.muushig import MuushigEngine
from arena.games.muushig.cards import mask_cards
from arena.games.muushig.phases import HAND_SIZE, PLAY, START_SCORE
from arena.games.muushig.state import HandState

# Action index = code + the base of the pending stage (DECIDE, EXCHANGE,
# TAKE, PLAY): the take code of "decline" is -1, so take's base is one on.
BASES: Final = (DECIDE_BASE, EXCHANGE_BASE, TAKE_BASE + 1, PLAY_BASE)

# A row is described in native ints (``RowParts``) before any array is
# written: the features that move every step as three words of bits over
# the row's columns 0-63, 64-127 and 128-190 (the seat's cards, the
# trick's cards, the one-hot flags), and the legal actions as three chunks
# of 33 bits over the 99 action indices. The single environment writes
# that description into its row item by item (``write_row``, ``write_legal``),
# the vector environment all tables' at once in NumPy; neither defines a
# feature, so both give the same arrays.
WORDS: Final = 3  # words of bits a row's features take
CHUNK: Final = 33  # action indices per chunk of the mask (3 x 33 = N_ACTIONS)
_M32: Final = 0xFFFF_FFFF
_M33: Final = 0x1_FFFF_FFFF
_FLAGS: Final = 128  # the column of word 2's bit 0
# The chunk that holds each stage's first action index (take's is decline).
_CHUNK_OF: Final = (DECIDE_BASE // CHUNK, EXCHANGE_BASE // CHUNK, TAKE_BASE // CHUNK, PLAY_BASE // CHUNK)


class RowParts:
    """Rows described in ints, appended row after row: per row, ``WORDS``
    words of feature bits (unsigned 64-bit) then (if its mask is asked)
    ``WORDS`` chunks of legal actions in ``words``, and the features not
    kept in its seat's template that are not bits, as values at flat
    positions (``at``, ``values``; the row's first column at the offset
    given). The row's base is the kept template of the seat described."""

    __slots__ = ("words", "at", "values")

    def __init__(self) -> None:
        self.words: list[int] = []
        self.at: list[int] = []
        self.values: list[float] = []

    def clear(self) -> None:
        self.words = []
        self.at = []
        self.values = []


class MuushigFace:
    """Observes a seat and applies an index, for one environment.

    ``templates``: where the per-seat kept features live, one row per seat
    (a vector environment gives each table its rows of one array, so it
    gathers all tables' templates at once)."""

    def __init__(self, codec: MuushigCodec, templates: np.ndarray | None = None) -> None:
        self.n_seats = codec.n_seats
        self.n_rounds = codec.n_rounds
        self.max_hands = codec.max_hands
        self._features = Rows(N_FEATURES, np.float32)
        self._masks = Rows(N_ACTIONS, np.int8)
        # Per seat, the features that change only when a trick ends (or a
        # hand, a round, the deciding and exchanging): a decision copies
        # them at once and describes the few that move every step.
        n = self.n_seats
        if templates is None:
            templates = np.zeros((n, N_FEATURES), dtype=np.float32)
        self._store: list[Any] = row_views(templates)
        self._zeros: Any = memoryview(array("f", bytes(4 * N_FEATURES)))
        # The cards of the hand's finished tricks, as a mask: the same for
        # every seat, so kept once per table and brought up to date here.
        self._played_hand: HandState | None = None
        self._played_count = 0
        self._played_bits = 0
        self._templates: list[_Template | None] = [None] * n
        self._rel = [[(seat, (seat - me) % n) for seat in range(n)] for me in range(n)]
        self._rel_of = [[(seat - me) % n for seat in range(n)] for me in range(n)]
        self._scratch = RowParts()

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
    # The single environment's rows: one description, written into a flat
    # buffer at an offset item by item.
    def write_mask(self, e: MuushigEngine, flat: Any, at: int) -> None:
        """Set the legal actions of the pending decision in a zeroed row."""
        parts = self._scratch
        parts.clear()
        self.describe_legal(e, parts)
        write_legal(parts.words, 0, flat, at)

    def write_features(self, e: MuushigEngine, me: int, x: Any, o: int) -> None:
        """Write all ``N_FEATURES`` of ``me``'s observation (the row need not
        be zeroed: the kept template overwrites all of it first)."""
        parts = self._scratch
        parts.clear()
        self.describe(e, me, 0, parts)
        x[o:o + N_FEATURES] = self._store[me]
        write_row(parts, 0, x, o)

    # ----------------------------------------------------- descriptions
    def describe_legal(self, e: MuushigEngine, out: RowParts) -> None:
        """Append the pending decision's legal actions as ``WORDS`` chunks."""
        stage = e.stage
        k = _CHUNK_OF[stage]
        shift = BASES[stage] - k * CHUNK  # index - chunk start of code 0
        if stage == PLAY:  # the engine's legal codes are the cards of its legal mask
            bits = e.legal_mask() << shift
        else:
            bits = 0
            for code in e.legal_codes():
                bits |= 1 << (code + shift)
        low, high = bits & _M33, bits >> CHUNK  # a stage spans at most two chunks
        words = out.words
        for j in range(WORDS):
            words.append(low if j == k else high if j == k + 1 else 0)

    def describe(self, e: MuushigEngine, me: int, o: int, out: RowParts) -> None:
        """Append ``me``'s observation: its template's row, the words of
        bits, and the values at ``o`` + column."""
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
        # What changes between two decisions of the same template.
        trick = 0  # word 1: columns 64-127
        for _, c in hand.trick:
            trick |= 1 << (_TRICK - 64 + c)
        played = hand.played
        if self._played_hand is not hand:
            self._played_hand, self._played_count, self._played_bits = hand, 0, 0
        if self._played_count != len(played):
            bits = self._played_bits
            for _, cards, _ in played[self._played_count:]:
                for _, c in cards:
                    bits |= 1 << c
            self._played_bits, self._played_count = bits, len(played)
        flags = 0  # bit k: column _FLAGS + k
        at, values = out.at, out.values
        to_act = e.current_seat
        if to_act is not None:
            flags |= 1 << (_PHASE - _FLAGS + stage)
            flags |= 1 << (_TO_ACT - _FLAGS + (to_act - me) % n)
            if stage == 1:  # EXCHANGE: the most this seat may discard
                at.append(o + _SCALARS + 1)
                values.append(hand.exchange_limit / HAND_SIZE)
        leader = hand.leader
        if leader is not None:
            flags |= 1 << (_LEADER - _FLAGS + (leader - me) % n)
        if not settled:
            status, exchanges = hand.status, hand.exchanges
            for seat, rel in self._rel[me]:
                flags |= 1 << (_STATUS - _FLAGS + 3 * rel + status[seat])
                done = exchanges[seat]
                at.append(o + _EXCHANGES + rel)
                values.append(-1.0 if done is None else done / HAND_SIZE)
            # Cards are drawn from the stock only while exchanging: once
            # settled, the template holds its count.
            at.append(o + _SCALARS)
            values.append((len(hand.stock) - hand.stock_drawn) / 32)
        if hand.face_up_taken:
            flags |= 1 << (_SCALARS + 2 - _FLAGS)
        words = out.words
        words.append(hand.hands[me] << _CARDS)  # word 0: columns 0-63
        # Columns 96-127, the finished tricks' cards: the word's top bits,
        # so it may pass 2**63 (a Python int; NumPy reads it as uint64).
        words.append(trick | self._played_bits << (_PLAYED - 64))
        words.append(flags)

    # Per seat, the features that change only when a trick ends, a hand or
    # a round ends, or every seat has decided and exchanged: kept, and
    # brought up to date by what happened since the seat last asked.
    def _template(self, e: MuushigEngine, me: int) -> _Template:
        hand, rounds = e.hand, self.n_rounds
        x = self._store[me]
        # A fresh row: zeroed at once, so a zero is not stored again (each
        # store is a call through the buffer protocol).
        x[0:N_FEATURES] = self._zeros
        x[_FACE_UP + hand.face_up] = 1.0
        x[_TRUMP + hand.trump] = 1.0
        x[_DEALER + (e.dealer - me) % self.n_seats] = 1.0
        stars, scores, tricks = e.stars, e.scores, hand.tricks
        for seat, rel in self._rel[me]:
            if stars[seat]:
                x[_STARS + rel] = stars[seat] / rounds
            if scores[seat]:
                x[_SCORES + rel] = scores[seat] / START_SCORE
            if tricks[seat]:
                x[_TRICKS + rel] = tricks[seat] / HAND_SIZE
        if e.round_number:
            x[_SCALARS + 3] = min(e.round_number, rounds - 1) / rounds
        x[_SCALARS + 4] = e.hand_number / self.max_hands
        kept = self._templates[me]
        if kept is None:
            kept = self._templates[me] = _Template(hand, e.round_number, x)
        else:  # the seat's template object kept from hand to hand
            kept.hand, kept.round, kept.played, kept.settled = hand, e.round_number, 0, False
        return kept

    def _tricks_since(self, e: MuushigEngine, me: int, kept: _Template) -> None:
        """The tricks finished since: the winner's score and tricks (a trick changes no other seat's), all seats' after the last
        trick (the muushig bonus)."""
        x, hand = kept.features, e.hand
        played, rel, scores, tricks = hand.played, self._rel_of[me], e.scores, hand.tricks
        for _, _, winner in played[kept.played:]:
            x[_SCORES + rel[winner]] = scores[winner] / START_SCORE
            x[_TRICKS + rel[winner]] = tricks[winner] / HAND_SIZE
        kept.played = len(played)
        if kept.played == HAND_SIZE:
            self._scores_and_tricks(e, me, x)

    def _settle(self, e: MuushigEngine, me: int, kept: _Template) -> None:
        x, hand = kept.features, e.hand
        status, exchanges = hand.status, hand.exchanges
        for seat, rel in self._rel[me]:  # into the fresh row's zeros, once a hand
            x[_STATUS + 3 * rel + status[seat]] = 1.0
            done = exchanges[seat]
            if done != 0:
                x[_EXCHANGES + rel] = -1.0 if done is None else done / HAND_SIZE
        if len(hand.stock) != hand.stock_drawn:
            x[_SCALARS] = (len(hand.stock) - hand.stock_drawn) / 32
        kept.settled = True

    def _scores_and_tricks(self, e: MuushigEngine, me: int, x: Any) -> None:
        scores, tricks = e.scores, e.hand.tricks
        for seat, rel in self._rel[me]:
            x[_SCORES + rel] = scores[seat] / START_SCORE
            x[_TRICKS + rel] = tricks[seat] / HAND_SIZE


def write_row(parts: RowParts, w: int, x: Any, o: int) -> None:
    """A row described at flat offset 0, its words from ``words[w]``, into
    ``x`` at ``o``, over its template already copied there: each bit of its
    words sets its column (the template is zero there), each value its place."""
    words = parts.words
    for j in range(WORDS):
        word = words[w + j]
        for half in range(2):
            bits = (word >> (32 * half)) & _M32
            if bits:
                col = o + 64 * j + 32 * half
                for c in mask_cards(bits):
                    x[col + c] = 1.0
    at, values = parts.at, parts.values
    for k in range(len(at)):
        x[o + at[k]] = values[k]


def write_legal(words: list[int], w: int, flat: Any, at: int) -> None:
    """The ``WORDS`` chunks of legal actions at ``words[w]`` into a zeroed
    mask row at ``at``."""
    for j in range(WORDS):
        chunk = words[w + j]
        if chunk:  # a stage's actions lie in one or two of the chunks
            base = at + j * CHUNK
            for c in mask_cards(chunk & _M32):
                flat[base + c] = 1
            if chunk >> 32:
                flat[base + 32] = 1


class _Template:
    """One seat's slowly changing features and what they were made from."""

    __slots__ = ("hand", "round", "played", "settled", "features")

    def __init__(self, hand: HandState, round: int, features: Any) -> None:
        self.hand, self.round = hand, round
        self.played, self.settled = 0, False
        self.features = features
