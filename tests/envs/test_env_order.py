"""``env()``'s wrapper keeps every rule of PettingZoo's order-enforcing
wrapper: the same errors before reset, the same warning for a step after
the end, the same values after reset."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

pytest.importorskip("pettingzoo", reason="the rl extra: pip install -e '.[rl]'")

from pettingzoo.utils.wrappers import OrderEnforcingWrapper  # noqa: E402

from arena.envs import muushig, thirteen  # noqa: E402
from arena.envs.order import OrderEnforcing  # noqa: E402

BEFORE_RESET = [
    lambda env: env.last(),
    lambda env: env.agent_selection,
    lambda env: env.agents,
    lambda env: env.rewards,
    lambda env: env.terminations,
    lambda env: env.truncations,
    lambda env: env.infos,
    lambda env: env.num_agents,
    lambda env: env.step(0),
    lambda env: env.observe("player_0"),
    lambda env: env.agent_iter(),
    lambda env: env.render(),
]


def _outcome(call, env):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            return ("value", repr(call(env)))
    except Exception as exc:  # noqa: BLE001 - the error itself is what is compared
        return (type(exc).__name__, str(exc))


@pytest.mark.parametrize("call", BEFORE_RESET)
@pytest.mark.parametrize("raw_env", [muushig.raw_env, lambda: thirteen.raw_env(deals=1)])
def test_before_reset_it_refuses_what_pettingzoos_wrapper_refuses(call, raw_env):
    ours, theirs = _outcome(call, OrderEnforcing(raw_env())), _outcome(call, OrderEnforcingWrapper(raw_env()))
    assert ours == theirs
    assert ours[0] != "value"


def test_after_reset_it_reads_the_environments_own_values():
    env = muushig.env(seed=3)
    env.reset()
    raw = env.unwrapped
    assert isinstance(env, OrderEnforcingWrapper)
    for _ in range(40):
        assert env.agent_selection == raw.agent_selection and env.agents is raw.agents
        assert env.rewards is raw.rewards and env.infos is raw.infos
        assert env.terminations is raw.terminations and env.truncations is raw.truncations
        obs, reward, terminated, truncated, info = env.last()
        assert obs is raw.observe(raw.agent_selection) and info is raw.infos[raw.agent_selection]
        assert env.last(observe=False)[0] is None
        env.step(int(np.flatnonzero(obs["action_mask"])[0]))


def test_a_step_after_the_end_warns_as_pettingzoos_wrapper_does(caplog):
    env = muushig.env(seed=1, max_hands=1)
    env.reset()
    for _ in env.agent_iter():
        obs, _, terminated, truncated, _ = env.last()
        env.step(None if terminated or truncated else int(np.flatnonzero(obs["action_mask"])[0]))
    assert env.agents == []
    caplog.clear()
    env.step(None)
    assert "step() called after all agents are terminated or truncated" in caplog.text
