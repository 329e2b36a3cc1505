"""Calling a bot author's strategy safely: on time, and always legally.

A strategy is one function ``(phase, legal, state) -> action``, plain or
``async``. Whatever it does -- raise, hang, answer nonsense -- the SDK still
answers before the deadline, with the arena's own default (rules §11) when
the strategy cannot be used.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import inspect
from enum import StrEnum
from typing import Any, Awaitable, Callable, Union

Action = Any
Strategy = Callable[[str, list[Any], dict[str, Any]], Union[Action, Awaitable[Action]]]


class FallbackReason(StrEnum):
    """Why the SDK answered instead of the strategy."""

    ILLEGAL = "illegal"  # the strategy's answer is not in ``legal``
    RAISED = "raised"  # the strategy raised an exception
    TIMEOUT = "timeout"  # the strategy overran the deadline


# The action's extra field saying the SDK chose the answer (servers ignore
# unknown fields; the compliance checker reads it).
FALLBACK_FIELD = "sdk_fallback"


def default_action(phase: str, legal: list[Any]) -> Action:
    """The answer the server itself would apply at the deadline.

    decide → fold if legal; otherwise the first legal answer, which is what
    the arena's legal-list ordering makes the default for every other phase
    (exchange: ``[]``, take: ``null``, play: the first card in canonical
    order).
    """
    if phase == "decide" and "fold" in legal:
        return "fold"
    if not legal:
        return None
    return legal[0]


def _as_set_key(value: Any) -> Any:
    if isinstance(value, list):
        try:
            return tuple(sorted(value, key=repr))
        except TypeError:  # pragma: no cover - repr always sorts
            return tuple(value)
    return value


def legal_index(action: Action, legal: list[Any]) -> int | None:
    """The position in ``legal`` of the answer ``action`` stands for, or None.

    Array answers (an exchange's discards) are compared as sets; a tuple is
    accepted for a list.
    """
    if isinstance(action, tuple):
        action = list(action)
    for index, candidate in enumerate(legal):
        if candidate == action and type(candidate) is type(action):
            return index
    if isinstance(action, list):
        wanted = _as_set_key(action)
        for index, candidate in enumerate(legal):
            if isinstance(candidate, list) and _as_set_key(candidate) == wanted:
                return index
    return None


def is_legal(action: Action, legal: list[Any]) -> bool:
    """Whether ``action`` is one of ``legal`` (arrays compared as sets)."""
    return legal_index(action, legal) is not None


async def call_strategy(
    strategy: Strategy,
    phase: str,
    legal: list[Any],
    state: dict[str, Any],
    *,
    timeout: float,
    executor: concurrent.futures.Executor | None,
) -> Action:
    """Run ``strategy`` for at most ``timeout`` seconds and return its answer.

    A plain function runs in ``executor`` (if given) so that a slow one cannot
    block the connection; its thread is abandoned on timeout. Raises
    ``TimeoutError`` or whatever the strategy raised.
    """
    # The strategy gets its own copy of the legal list: shuffling or popping
    # it must not change what the SDK checks the answer against.
    legal_copy: Any = dict(legal) if isinstance(legal, dict) else list(legal)
    # asyncio.timeout rather than wait_for: wait_for (Python 3.11) may swallow
    # a cancellation that coincides with the strategy finishing.
    async with asyncio.timeout(timeout):
        if executor is None or inspect.iscoroutinefunction(strategy) or inspect.iscoroutinefunction(
            getattr(strategy, "__call__", None)
        ):
            result = strategy(phase, legal_copy, state)
        else:
            loop = asyncio.get_running_loop()
            result = await loop.run_in_executor(executor, functools.partial(strategy, phase, legal_copy, state))
        if inspect.isawaitable(result):
            result = await result
    return result
