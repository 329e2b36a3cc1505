"""Muushig as a PettingZoo AEC environment.

::

    from arena.envs import muushig

    env = muushig.env(seed=1, last_two_forced=True)       # rule options as keywords
    env.reset()
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        mask = obs["action_mask"]
        env.step(None if terminated or truncated else env.action_space(agent).sample(mask))

For many tables stepped in one call, observations and masks written into
arrays made once, see :func:`vector_env` (:mod:`arena.envs.muushig_vector`).

Agents are ``player_0`` .. ``player_{n-1}`` (seat numbers); ``opponents=
{seat: "heuristic"}`` gives seats to the house bots instead. Observations,
actions and rewards: :mod:`arena.envs.muushig_codec` and docs/envs.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from arena.envs.aec import ArenaAEC
from arena.envs.order import OrderEnforcing
from arena.envs.muushig_codec import MuushigCodec
from arena.envs.muushig_face import MuushigFace
from arena.envs.muushig_vector import MuushigVectorEnv, vector_env

__all__ = ["MuushigVectorEnv", "env", "raw_env", "vector_env"]


def raw_env(*, seed: int | None = None, opponents: Mapping[int, str] | None = None,
            render_mode: str | None = None, **rules: Any) -> ArenaAEC:
    """The environment without PettingZoo's checking wrappers."""
    return ArenaAEC("muushig", MuushigCodec, rules, seed=seed, opponents=opponents, render_mode=render_mode,
                    face=MuushigFace)


def env(*, seed: int | None = None, opponents: Mapping[int, str] | None = None,
        render_mode: str | None = None, **rules: Any) -> Any:
    """A Muushig match per ``reset``; keyword arguments other than these are
    the match's rule options (``max_hands``, ``players``, ...)."""
    return OrderEnforcing(raw_env(seed=seed, opponents=opponents,
                                                  render_mode=render_mode, **rules))
