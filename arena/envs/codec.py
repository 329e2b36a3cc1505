"""What a learning environment and a protocol bot share: one game's
observation encoding, action masks and action decoding.

A codec reads only the request a bot receives on the wire (protocol §3):
its ``phase``, its ``legal`` list (or ``constraints`` map) and its
``state`` -- the engine's ``observation(seat)``, which holds that seat's own
cards and nothing of another seat's hand. The environment builds every
observation from those three, and the bot adapter
(:mod:`arena.envs.policy_bot`) builds it from the same three as the SDK
hands them over, so a policy sees the same arrays offline and on a server.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np
from gymnasium import spaces

Observation = dict[str, np.ndarray]  # {"observation": features, "action_mask": 0/1 per action}


class IllegalChoiceError(ValueError):
    """A policy chose an action its mask forbids (or outside the action space)."""


class GameCodec(Protocol):
    """One game's arrays: built per match, from its rules."""

    observation_space: spaces.Dict
    action_space: spaces.Discrete

    def encode(self, phase: str, legal: Any, state: dict[str, Any]) -> Observation:
        """The observation and mask of a request (``legal`` is the request's
        ``legal`` list, or its ``constraints`` map when it has no list)."""
        ...

    def decode(self, action: int, phase: str, legal: Any, state: dict[str, Any],
               mask: np.ndarray | None = None) -> Any:
        """The wire action that ``action`` stands for in this request, or
        :class:`IllegalChoiceError` (``mask``: this request's, if known)."""
        ...

    def rewards(self, event: dict[str, Any]) -> list[float] | None:
        """Reward per seat that a public event carries, or None."""
        ...

    @property
    def reward_kinds(self) -> frozenset[str]:
        """The kinds of the events that carry rewards: the environment asks
        ``rewards`` of those only."""
        ...


class Rows:
    """Fresh zeroed rows of ``width`` values, handed out of one block.

    An environment makes two arrays per step (features and mask). One
    ``np.zeros`` per array and NumPy's item writes cost more than the
    engine's whole step; a block of rows costs one ``np.zeros`` for
    ``count`` of them, and a row is filled through a flat ``memoryview``
    of the block, whose item writes are plain Python stores. Each row is
    handed out once, so an observation a caller keeps is never written
    again (it keeps its block alive, as a slice of any array does).
    """

    __slots__ = ("width", "dtype", "count", "_rows", "_flats", "_next")

    def __init__(self, width: int, dtype: type[np.generic], count: int = 256) -> None:
        self.width, self.dtype, self.count = width, dtype, count
        self._next = count  # empty: the first take() makes a block

    def take(self) -> tuple[np.ndarray, Any]:
        """A new zeroed row, and a flat ``memoryview`` of the same row."""
        i = self._next
        if i == self.count:
            block = np.zeros((self.count, self.width), dtype=self.dtype)
            self._rows = list(block)  # every row's view at once: cheaper than one by one
            self._flats = row_views(block)
            i = 0
        self._next = i + 1
        return self._rows[i], self._flats[i]


def row_views(block: np.ndarray) -> list[Any]:
    """A flat ``memoryview`` per row of a C-contiguous 2-D array. A store
    through a row's own view takes an index below the row's width: a small
    int Python keeps made, where an index into the whole block is a new
    int object per store (which cost about as much as the store)."""
    flat: Any = block.data.cast("B")
    flat = flat.cast(block.dtype.char)
    width = block.shape[1]
    return [flat[i * width:(i + 1) * width] for i in range(block.shape[0])]


def observation_space(features: int, low: float, high: float, actions: int) -> spaces.Dict:
    return spaces.Dict({
        "observation": spaces.Box(low=low, high=high, shape=(features,), dtype=np.float32),
        "action_mask": spaces.Box(low=0, high=1, shape=(actions,), dtype=np.int8),
    })


def check_choice(action: Any, mask: np.ndarray) -> int:
    """``action`` as an int index, if the mask allows it."""
    if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
        raise IllegalChoiceError(f"an action is an integer index, not {action!r}")
    index = int(action)
    if not 0 <= index < len(mask):
        raise IllegalChoiceError(f"action {index} is outside the action space 0..{len(mask) - 1}")
    if not mask[index]:
        allowed = np.flatnonzero(mask).tolist()
        raise IllegalChoiceError(f"action {index} is not legal now; the mask allows {allowed}")
    return index
