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
