"""Muushig observations and masks read from the engine's own state.

The environment's reference encoding is :class:`~arena.envs.muushig_codec.
MuushigCodec` over the wire request (phase, legal list, ``observation(seat)``
dict), the one a protocol bot builds. Per step that path makes the
seat's state dict and legal strings only to turn them back into the
numbers the engine holds, and cost about 90 % of an environment step. This
face reads the same numbers from the engine directly -- the seat's own
card mask, the public table state, the fast API's legal codes. What it may
read is what ``arena.games.muushig.views.observe`` puts in that seat's
view and nothing else (another seat's hand, the stock's order and the
discards are never touched); ``tests/envs/test_env_faces.py`` holds it equal
to the reference encoding at every step of random matches under every rule
option.

Every feature but the seat's own cards is public, and the same for every
seat once its seats are counted from the observer: so a face keeps one
row of them per table, in absolute seat order (the *public row*), brought
up to date by what changed since it last looked, and an observation is
that row turned to the observing seat (one gather through
:func:`rotations`) plus the seat's cards. The single environment turns and
writes one row; the vector environment turns all tables' rows with one
NumPy gather.

An action index is the engine's fast code plus the phase's base (the codec
was numbered so), so a step is ``apply_code(index - base)`` with no wire
string made or parsed.
"""

from __future__ import annotations

from array import array
from typing import Any, Final

import numpy as np

from arena.envs.codec import Observation, Rows, check_choice
from arena.envs.muushig_codec import MuushigCodec
from arena.envs.muushig_layout import (CARDS as _CARDS, DEALER as _DEALER, DECIDE_BASE, EXCHANGE_BASE,
                                       EXCHANGES as _EXCHANGES, FACE_UP as _FACE_UP, LEADER as _LEADER,
                                       N_ACTIONS, N_FEATURES, PHASE as _PHASE, PLAY_BASE, PLAYED as _PLAYED,
                                       SCALARS as _SCALARS, SCORES as _SCORES, SEATS, STARS as _STARS,
                                       STATUS as _STATUS, TAKE_BASE, TO_ACT as _TO_ACT, TRICK as _TRICK,
                                       TRICKS as _TRICKS, TRUMP as _TRUMP)
from arena.games.muushig import MuushigEngine
from arena.games.muushig.cards import mask_cards
from arena.games.muushig.phases import DECIDE, EXCHANGE, HAND_SIZE, OVER, PLAY, START_SCORE, WAITING
from arena.games.muushig.state import HandState

# Action index = code + the base of the pending stage (DECIDE, EXCHANGE,
# TAKE, PLAY): the take code of "decline" is -1, so take's base is one on.
# A list: compiled code indexes a Final tuple by making it again.
BASES: Final[list[int]] = [DECIDE_BASE, EXCHANGE_BASE, TAKE_BASE + 1, PLAY_BASE]

# The legal actions are described as ``WORDS`` chunks of ``CHUNK`` bits
# over the 99 action indices: each stays a native int in compiled code
# (a 99-bit mask would be a boxed long), and a chunk's bits unpack into the
# mask's row in NumPy.
WORDS: Final = 3
CHUNK: Final = 33  # 3 x 33 = N_ACTIONS
_M32: Final = 0xFFFF_FFFF
_M33: Final = 0x1_FFFF_FFFF

# The feature blocks counted by seat, (offset, width per seat): in an
# observation seat ``rel`` is counted from the observer, in the public row
# seat ``s`` is the engine's.
_SEAT_BLOCKS: Final = ((_STATUS, 3), (_SCORES, 1), (_STARS, 1), (_TRICKS, 1), (_EXCHANGES, 1), (_DEALER, 1),
                       (_TO_ACT, 1), (_LEADER, 1))
# The columns those blocks span, next to each other in the layout: the only
# ones a turn moves.
TURNED_FIRST: Final = _STATUS
TURNED_END: Final = _LEADER + SEATS


def rotations(n_seats: int) -> np.ndarray:
    """Per observing seat ``me``, the public row's column of each
    observation column: ``obs = public[rotations(n)[me]]``."""
    out = np.tile(np.arange(N_FEATURES, dtype=np.intp), (n_seats, 1))
    for me in range(n_seats):
        for offset, width in _SEAT_BLOCKS:
            for rel in range(n_seats):
                seat = (rel + me) % n_seats
                for k in range(width):
                    out[me, offset + width * rel + k] = offset + width * seat + k
    return out


def _bits(codes: tuple[int, ...], shift: int) -> int:
    bits = 0
    for code in codes:
        bits |= 1 << (code + shift)
    return bits


class MuushigFace:
    """Observes a seat and applies an index, for one table.

    ``public``: where this table's public row lives (a vector environment
    gives each table its row of one array, and turns them all at once)."""

    def __init__(self, codec: MuushigCodec, public: np.ndarray | None = None) -> None:
        self.n_seats = codec.n_seats
        self.n_rounds = codec.n_rounds
        self.max_hands = codec.max_hands
        self._features = Rows(N_FEATURES, np.float32)
        self._masks = Rows(N_ACTIONS, np.int8)
        if public is None:
            public = np.zeros(N_FEATURES, dtype=np.float32)
        self.public = public
        self._x: Any = public.data  # a 1-D float32 row: item stores are plain stores
        self._zeros: Any = memoryview(array("f", bytes(4 * N_FEATURES)))
        # The values stored most, boxed once: compiled code boxes a float
        # literal again at each store into a Python object.
        self._one: object = 1.0
        self._zero: object = 0.0
        self._turned: list[np.ndarray] = list(rotations(self.n_seats))
        # What the public row was last brought up to (``sync``).
        self._hand: HandState | None = None
        self._decided = 0  # decide_position
        self._exchanged = 0  # exchange_position
        self._taken = False
        self._phase = -1  # the phase and the seat to act written (-1: none), the exchange limit
        self._to_act = -1
        self._limit = 0
        self._trick: list[tuple[int, int]] | None = None  # the trick list whose cards are written
        self._trick_len = 0
        self._trick_bits = 0
        self._played = 0  # finished tricks written
        self._leader = -1
        self._words: list[int] = []
        self._exchange_bits: dict[tuple[int, ...], int] = {}  # legal exchange codes -> their bits
        self._exchange_codes: tuple[int, ...] = ()  # the last looked up, and its bits
        self._exchange_last = 0

    def observe(self, engine: Any, seat: int, acting: bool) -> Observation:
        e: MuushigEngine = engine
        mask, mask_flat = self._masks.take()
        if acting:
            self.write_mask(e, mask_flat, 0)
        row, row_flat = self._features.take()
        self.write_features(e, seat, row, row_flat)
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
    def write_mask(self, e: MuushigEngine, flat: Any, at: int) -> None:
        """Set the legal actions of the pending decision in a zeroed row."""
        words = self._words
        words.clear()
        self.describe_legal(e, words)
        for j in range(WORDS):
            chunk = words[j]
            if chunk:  # a stage's actions lie in one or two of the chunks
                base = at + j * CHUNK
                for c in mask_cards(chunk & _M32):
                    flat[base + c] = 1
                if chunk >> 32:
                    flat[base + 32] = 1

    def write_features(self, e: MuushigEngine, me: int, row: np.ndarray, flat: Any) -> None:
        """Write ``me``'s observation into a zeroed row (``flat``: its view)."""
        self.sync(e)
        self.public.take(self._turned[me], None, row, "clip")
        for c in mask_cards(e.hand.hands[me]):
            flat[_CARDS + c] = self._one

    def describe_legal(self, e: MuushigEngine, words: list[int]) -> None:
        """Append the pending decision's legal actions as ``WORDS`` chunks
        (a stage's indices lie in one or two of them)."""
        stage = e.stage
        if stage == PLAY:  # the engine's legal codes are the cards of its legal mask
            words.append(0)
            words.append(0)
            words.append(e.legal_mask() << (PLAY_BASE - 2 * CHUNK))
        elif stage == EXCHANGE:
            # Up to 32 codes, from a few dozen tuples the engine hands out
            # again and again: their bits are made once per tuple.
            codes = e.legal_codes()
            if codes is self._exchange_codes:  # most often the same as last time: no hash of 32 codes
                bits = self._exchange_last
            else:
                memo = self._exchange_bits
                known = memo.get(codes)
                bits = memo[codes] = _bits(codes, EXCHANGE_BASE) if known is None else known
                self._exchange_codes, self._exchange_last = codes, bits
            words.append(bits & _M33)
            words.append(bits >> CHUNK)
            words.append(0)
        elif stage == DECIDE:
            words.append(_bits(e.legal_codes(), DECIDE_BASE))
            words.append(0)
            words.append(0)
        else:  # TAKE: decline's code is -1
            bits = _bits(e.legal_codes(), TAKE_BASE + 1 - CHUNK)
            words.append(0)
            words.append(bits & _M33)
            words.append(bits >> CHUNK)

    # ------------------------------------------------------ public row
    def sync(self, e: MuushigEngine) -> None:
        """Bring the public row up to date: written whole at each new hand
        (and at the match's end), else only what moved since the last call.

        Within a hand the engine changes a seat's status only as
        ``decide_position`` passes it, an exchange only as
        ``exchange_position`` passes it, and a score only at a trick's end,
        the winner's; what changes otherwise (all seats folding, the
        muushig bonus, a round's end) comes with a new hand or the match's
        end. The equality tests hold this to the reference encoding."""
        hand, x = e.hand, self._x
        if hand is not self._hand or e.stage == OVER:
            self._rewrite(e)
        if hand.decide_position != self._decided:  # decisions taken (or forced) since
            status, order = hand.status, hand.speaking_order
            for k in range(self._decided, hand.decide_position):
                seat = order[k]
                x[_STATUS + 3 * seat + WAITING] = self._zero
                x[_STATUS + 3 * seat + status[seat]] = self._one
            self._decided = hand.decide_position
        if hand.exchange_position != self._exchanged:  # exchanges made since
            exchanges, entered = hand.exchanges, hand.entered
            for k in range(self._exchanged, hand.exchange_position):
                seat = entered[k]
                done = exchanges[seat]
                x[_EXCHANGES + seat] = -1.0 if done is None else done / HAND_SIZE
            x[_SCALARS] = (len(hand.stock) - hand.stock_drawn) / 32
            self._exchanged = hand.exchange_position
        # Each store is a call through the buffer protocol: a column is
        # written only when its value changed (the seat to act, most steps).
        asked = e.current_seat
        to_act = -1 if asked is None else asked
        if to_act != self._to_act:
            self._to_act = self._move_one(_TO_ACT, self._to_act, to_act)
        phase = -1 if asked is None else e.stage
        if phase != self._phase:
            self._phase = self._move_one(_PHASE, self._phase, phase)
        limit = hand.exchange_limit if phase == EXCHANGE else 0  # the most the seat to act may discard
        if limit != self._limit:
            x[_SCALARS + 1] = limit / HAND_SIZE
            self._limit = limit
        if hand.face_up_taken != self._taken:
            x[_SCALARS + 2] = self._one
            self._taken = True
        trick = hand.trick
        if trick is not self._trick:  # a new trick is a new list
            for c in mask_cards(self._trick_bits):
                x[_TRICK + c] = self._zero
            self._trick, self._trick_len, self._trick_bits = trick, 0, 0
        if len(trick) != self._trick_len:
            bits = self._trick_bits
            for k in range(self._trick_len, len(trick)):
                c = trick[k][1]
                x[_TRICK + c] = self._one
                bits |= 1 << c
            self._trick_len, self._trick_bits = len(trick), bits
        played = hand.played
        if len(played) != self._played:  # tricks finished: their cards, and the winner's score and tricks
            scores, tricks = e.scores, hand.tricks
            for k in range(self._played, len(played)):
                _, cards, winner = played[k]
                for _, c in cards:
                    x[_PLAYED + c] = self._one
                x[_SCORES + winner] = scores[winner] / START_SCORE
                x[_TRICKS + winner] = tricks[winner] / HAND_SIZE
            self._played = len(played)
        leader = -1 if hand.leader is None else hand.leader
        if leader != self._leader:
            self._leader = self._move_one(_LEADER, self._leader, leader)

    def _move_one(self, block: int, was: int, now: int) -> int:
        """Move a one-hot block's 1 from ``was`` to ``now`` (-1: none);
        returns ``now``, what the block holds."""
        x = self._x
        if was >= 0:
            x[block + was] = self._zero
        if now >= 0:
            x[block + now] = self._one
        return now

    def _rewrite(self, e: MuushigEngine) -> None:
        """The whole row, from a zeroed one: what is fixed for the hand and
        the seats' statuses, scores and exchanges as they stand; the rest
        (tricks, the turn) as if none had been written, for ``sync``."""
        hand, x, n, rounds = e.hand, self._x, self.n_seats, self.n_rounds
        x[0:N_FEATURES] = self._zeros
        x[_FACE_UP + hand.face_up] = self._one
        x[_TRUMP + hand.trump] = self._one
        x[_DEALER + e.dealer] = self._one
        stars, scores, tricks, status, exchanges = e.stars, e.scores, hand.tricks, hand.status, hand.exchanges
        for seat in range(n):
            x[_STATUS + 3 * seat + status[seat]] = self._one
            if stars[seat]:
                x[_STARS + seat] = stars[seat] / rounds
            if scores[seat]:
                x[_SCORES + seat] = scores[seat] / START_SCORE
            if tricks[seat]:
                x[_TRICKS + seat] = tricks[seat] / HAND_SIZE
            done = exchanges[seat]
            if done != 0:
                x[_EXCHANGES + seat] = -1.0 if done is None else done / HAND_SIZE
        if len(hand.stock) != hand.stock_drawn:
            x[_SCALARS] = (len(hand.stock) - hand.stock_drawn) / 32
        if e.round_number:
            x[_SCALARS + 3] = min(e.round_number, rounds - 1) / rounds
        if e.hand_number:
            x[_SCALARS + 4] = e.hand_number / self.max_hands
        self._hand = hand
        self._decided, self._exchanged = hand.decide_position, hand.exchange_position
        self._taken = False
        self._phase, self._to_act, self._limit = -1, -1, 0
        self._trick, self._trick_len, self._trick_bits = None, 0, 0
        self._played = 0
        self._leader = -1
