"""Thirteen cards as a PettingZoo AEC environment.

::

    from arena.envs import thirteen

    env = thirteen.env(seed=1, deals=4, wheel="second_highest", candidates=16)

Every seat arranges at once in the game; here the seats that still owe an
arrangement take their turns in seat order, and none sees another's rows
before the showdown (the engine's ``arranged`` event says only who has
answered). The action is an index into the seat's candidate arrangements
(:mod:`arena.envs.thirteen_codec`, docs/envs.md); ``opponents={seat:
"strong"}`` gives seats to the house bots.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

from arena.envs.aec import ArenaAEC
from arena.envs.order import OrderEnforcing
from arena.envs.thirteen_codec import DEFAULT_CANDIDATES, ThirteenCodec


def raw_env(*, seed: int | None = None, opponents: Mapping[int, str] | None = None,
            candidates: int = DEFAULT_CANDIDATES, render_mode: str | None = None, **rules: Any) -> ArenaAEC:
    """The environment without PettingZoo's checking wrappers."""
    return ArenaAEC("thirteen", partial(ThirteenCodec, candidates=candidates), rules, seed=seed,
                    opponents=opponents, render_mode=render_mode)


def env(*, seed: int | None = None, opponents: Mapping[int, str] | None = None,
        candidates: int = DEFAULT_CANDIDATES, render_mode: str | None = None, **rules: Any) -> Any:
    """A thirteen match per ``reset``; other keyword arguments are the
    match's rule options (``deals``, ``players``, ``wheel``, ...)."""
    return OrderEnforcing(raw_env(seed=seed, opponents=opponents, candidates=candidates,
                                                  render_mode=render_mode, **rules))
