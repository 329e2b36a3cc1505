"""Many Muushig tables stepped as one call: the vectorized environment.

::

    from arena.envs import muushig

    tables = muushig.vector_env(num_envs=64, seed=1, last_two_forced=True)
    obs, mask, seat = tables.reset()                 # (64, 191), (64, 99), (64,)
    while learning:
        obs, mask, seat, rewards, done = tables.step(policy(obs, mask))   # rewards (64, seats)

The single environment (``muushig.env()``) pays PettingZoo's turn
bookkeeping, two fresh NumPy rows and a Python-level loop around every
decision: together several times the engine's own step. Here one call
steps every table once: each table's action is applied as an engine code,
and its public row (every feature but the seat's cards, in absolute seat
order) is brought up to date by the same
:class:`~arena.envs.muushig_face.MuushigFace` that observes for the single
environment, which also gives the acting seat's cards and legal actions
as ints; so a table's row is exactly the observation the single
environment gives that seat. All tables' rows are then written at once in
NumPy (a copy of the public rows, one gather that turns the columns
counted by seat to each acting seat, an unpack of the cards' and legal
actions' bits): stores item by item from the loop cost as much as the
engine's step. The loop is compiled with the engine (``setup.py``'s
``HOT_MODULES``).

Every seat of every table is played by the caller (no house bots): ``seat``
says whose decision each row is, counted as the engine counts seats; the
features are from that seat's point of view, as in the single
environment. ``rewards[i, s]`` is what seat ``s`` of table ``i`` gained in
this step (+1 to a round's winner), the single environment's
``rewards[agent]`` after the same step. A table whose match ended in this
step has ``done[i]`` set and is dealt its next match at once: its row of
``obs``, ``mask`` and ``seat`` is already the new match's first decision
(no decision is owed after the last one, so no final observation is lost).

Decks: table ``i`` owns ``random.Random(seed + i)`` and deals each match
from it as ``muushig.raw_env(seed=seed + i)`` does, reset after reset, so
a table's matches are reproducible and can be replayed alone.
"""

from __future__ import annotations

import random
from typing import Any, Final

import numpy as np
from gymnasium import spaces

from arena.envs.codec import IllegalChoiceError
from arena.envs.muushig_codec import MuushigCodec
from arena.envs.muushig_face import (BASES, CHUNK, TURNED_END as _TURNED_END, TURNED_FIRST as _TURNED, WORDS,
                                     MuushigFace, rotations)
from arena.envs.muushig_layout import CARDS as _CARDS, N_ACTIONS, N_FEATURES
from arena.games.muushig import MuushigEngine
from arena.games.muushig.events import RoundEnd
from arena.games.muushig.phases import OVER

_PER_TABLE: Final = 1 + WORDS  # words a table appends: its seat's cards, its chunks of legal actions


class MuushigVectorEnv:
    """``num_envs`` Muushig tables, each playing matches one after another."""

    def __init__(self, num_envs: int, *, seed: int | None = None, copy: bool = True, **rules: Any) -> None:
        if not isinstance(num_envs, int) or num_envs < 1:
            raise ValueError(f"num_envs is a number of tables, at least 1, not {num_envs!r}")
        # The engine checks the rules (RuleConfigError names a bad option).
        self.rules: dict[str, Any] = MuushigEngine(dict(rules), random.Random(0)).rules
        codec = MuushigCodec(self.rules)
        self.num_envs = num_envs
        self.n_seats: int = codec.n_seats
        # Returned arrays are copies unless ``copy=False``: then they are
        # the buffers themselves, written again by the next step.
        self.copy = copy
        self.single_observation_space: spaces.Space = codec.observation_space["observation"]
        self.single_action_space: spaces.Discrete = codec.action_space
        n_seats = self.n_seats
        # Every table's public row (absolute seat order, kept up to date by
        # its face). A step copies them into ``obs`` and turns the columns
        # counted by seat to each table's acting seat with one gather
        # through ``_turn``: per (table, seat), the flat public columns of
        # those of that seat's observation. The other columns are the same
        # for every seat, and gathering them too cost half again as much.
        self._public = np.zeros((num_envs, N_FEATURES), dtype=np.float32)
        self._public_flat = self._public.reshape(-1)
        self._faces = [MuushigFace(codec, self._public[i]) for i in range(num_envs)]
        turned = rotations(n_seats)[:, _TURNED:_TURNED_END]
        self._turn = (np.arange(num_envs, dtype=np.intp)[:, None, None] * N_FEATURES
                      + turned[None]).reshape(num_envs * n_seats, _TURNED_END - _TURNED)
        self._first_turn = np.arange(num_envs, dtype=np.intp) * n_seats
        self._turn_rows = np.zeros(num_envs, dtype=np.intp)
        self._index = np.zeros((num_envs, _TURNED_END - _TURNED), dtype=np.intp)
        self._turned = np.zeros((num_envs, _TURNED_END - _TURNED), dtype=np.float32)
        self._obs = np.zeros((num_envs, N_FEATURES), dtype=np.float32)
        self._mask = np.zeros((num_envs, N_ACTIONS), dtype=np.int8)
        self._seat = np.zeros(num_envs, dtype=np.int64)
        self._rewards = np.zeros((num_envs, self.n_seats), dtype=np.float32)
        self._done = np.zeros(num_envs, dtype=np.bool_)
        # Per table, ``1 + WORDS`` native ints: the acting seat's cards and
        # the chunks of its legal actions, unpacked for all tables at once
        # (an item store into an array from the loop goes through the
        # buffer protocol with a boxed value).
        self._words: list[int] = []
        self._seats: list[int] = [0] * num_envs
        self._mask_chunks = self._mask.reshape(num_envs, WORDS, CHUNK)
        self._r: Any = self._rewards.data.cast("B").cast("f")
        self._d: Any = self._done.data.cast("B")
        self._rewarded = False  # a reward or an end was written by the last step
        self._rngs: list[random.Random] = self._seeded(seed)
        self._engines: list[MuushigEngine] = []

    def _seeded(self, seed: int | None) -> list[random.Random]:
        if seed is None:
            return [random.Random() for _ in range(self.num_envs)]
        return [random.Random(seed + i) for i in range(self.num_envs)]

    def _deal(self, table: int) -> MuushigEngine:
        """Table ``table``'s next match, dealt as the single environment's
        ``reset`` deals it (one 64-bit draw of the table's rng seeds the decks)."""
        engine = MuushigEngine(self.rules, random.Random(self._rngs[table].getrandbits(64)))
        engine.start()
        return engine

    # -------------------------------------------------------- the API
    def reset(self, seed: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """A new match at every table (``seed``: the tables' rngs start
        again, table ``i`` from ``seed + i``). Returns ``(obs, mask, seat)``."""
        if seed is not None:
            self._rngs = self._seeded(seed)
        self._engines = [self._deal(i) for i in range(self.num_envs)]
        words: list[int] = []
        for i in range(self.num_envs):
            self._describe(i, self._engines[i], words)
        self._write(words)
        if self.copy:
            return self._obs.copy(), self._mask.copy(), self._seat.copy()
        return self._obs, self._mask, self._seat

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Play one action index per table (each allowed by that table's
        mask). Returns ``(obs, mask, seat, rewards, done)``. A refused
        action raises :class:`~arena.envs.codec.IllegalChoiceError` before
        any table moves."""
        if not self._engines:
            raise RuntimeError("call reset() before step()")
        chosen = self._checked(actions)
        if self._rewarded:
            self._rewards.fill(0)
            self._done.fill(False)
            self._rewarded = False
        self._advance(chosen)
        if self.copy:
            return (self._obs.copy(), self._mask.copy(), self._seat.copy(),
                    self._rewards.copy(), self._done.copy())
        return self._obs, self._mask, self._seat, self._rewards, self._done

    def close(self) -> None:
        self._engines = []

    # ------------------------------------------------------- the loop
    def _checked(self, actions: Any) -> list[int]:
        """``actions`` as one int per table, each allowed by its mask (read
        from the description the mask was written from, not the array a
        caller may have written into)."""
        given = np.asarray(actions)
        n = self.num_envs
        if given.shape != (n,) or given.dtype.kind not in "iu":
            raise IllegalChoiceError(f"actions: one integer index per table, {n} of them; "
                                     f"got an array of shape {given.shape} and type {given.dtype}")
        chosen: list[int] = given.tolist()
        words = self._words
        for i in range(n):
            a = chosen[i]
            if not 0 <= a < N_ACTIONS or not (words[_PER_TABLE * i + 1 + a // CHUNK] >> (a % CHUNK)) & 1:
                at = _PER_TABLE * i + 1
                allowed = [b for b in range(N_ACTIONS) if (words[at + b // CHUNK] >> (b % CHUNK)) & 1]
                raise IllegalChoiceError(f"table {i}: action {a} is not legal now; its mask allows {allowed}")
        return chosen

    def _advance(self, chosen: list[int]) -> None:
        engines, r, d, n_seats = self._engines, self._r, self._d, self.n_seats
        words: list[int] = []
        for i in range(self.num_envs):
            e = engines[i]
            before = e.round_number
            events = e.apply_code(chosen[i] - BASES[e.stage])
            if e.round_number != before:  # a round ended: a star to its winner
                for event in events:
                    if isinstance(event, RoundEnd):
                        r[i * n_seats + event.winner] = 1.0
                        self._rewarded = True
            if e.stage == OVER:
                d[i] = 1
                self._rewarded = True
                e = engines[i] = self._deal(i)
            self._describe(i, e, words)
        self._write(words)

    def _describe(self, i: int, e: MuushigEngine, words: list[int]) -> None:
        """Table ``i``'s pending decision: its public row brought up to
        date, the acting seat's cards and legal actions appended to ``words``."""
        seat = e.current_seat
        assert seat is not None  # a table always owes a decision: a finished match is dealt anew
        face = self._faces[i]
        face.sync(e)
        words.append(e.hand.hands[seat])
        face.describe_legal(e, words)
        self._seats[i] = seat

    def _write(self, words: list[int]) -> None:
        """All tables' rows: the public rows turned to their acting seats
        (one gather), the seats' cards and the masks' chunks unpacked."""
        self._words = words
        n = self.num_envs
        self._seat[:] = self._seats
        np.add(self._first_turn, self._seat, out=self._turn_rows)
        # mode="clip": the rows are in range, and "raise" would gather into
        # a buffer first and copy it (three times the cost).
        np.take(self._turn, self._turn_rows, axis=0, out=self._index, mode="clip")
        np.take(self._public_flat, self._index, out=self._turned, mode="clip")
        np.copyto(self._obs, self._public)
        self._obs[:, _TURNED:_TURNED_END] = self._turned
        bits = np.unpackbits(np.array(words, dtype="<u8").view(np.uint8),
                             bitorder="little").reshape(n, _PER_TABLE, 64)
        self._obs[:, _CARDS:_CARDS + 32] = bits[:, 0, :32]  # zero in every public row
        self._mask_chunks[...] = bits[:, 1:, :CHUNK]


def vector_env(num_envs: int, *, seed: int | None = None, copy: bool = True, **rules: Any) -> MuushigVectorEnv:
    """``num_envs`` Muushig tables stepped as one; keyword arguments other
    than these are the matches' rule options (``max_hands``, ``players``, ...)."""
    return MuushigVectorEnv(num_envs, seed=seed, copy=copy, **rules)
