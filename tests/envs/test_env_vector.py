"""Muushig's vectorized environment gives, table by table, what the single
environment gives: the same observation and mask for the seat to act, the
same rewards, the end of the match at the same step, the next match dealt
from the same seed; and it refuses a forbidden action before any table
moves."""

from __future__ import annotations

import random
import warnings

import numpy as np
import pytest

pytest.importorskip("pettingzoo", reason="the rl extra: pip install -e '.[rl]'")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from pettingzoo.test import api_test  # noqa: E402

from arena.envs import muushig  # noqa: E402
from arena.envs.aec import agent_name  # noqa: E402
from arena.envs.codec import IllegalChoiceError  # noqa: E402
from arena.games.base import RuleConfigError  # noqa: E402

RULES = [
    {},
    {"players": 2},
    {"players": 3, "last_two_forced": True},
    {"players": 4, "auto_enter_after_folds": 2, "trump_ace_first_lead": True, "max_hands": 3},
    {"max_hands": 1},
]


def _random_actions(mask: np.ndarray, rng: random.Random) -> np.ndarray:
    return np.array([rng.choice(np.flatnonzero(row)) for row in mask], dtype=np.int64)


def _singles(seed: int, n: int, rules: dict) -> list:
    singles = [muushig.raw_env(seed=seed + i, **rules) for i in range(n)]
    for single in singles:
        single.reset()
    return singles


def _assert_table_is_the_single_env(i: int, single, obs, mask, seat) -> None:
    agent = single.agent_selection
    assert seat[i] == single._seat_of[agent], (i, seat[i], agent)
    expected, _, terminated, truncated, _ = single.last()
    assert not (terminated or truncated)
    assert obs.dtype == expected["observation"].dtype and mask.dtype == expected["action_mask"].dtype
    assert np.array_equal(obs[i], expected["observation"]), (i, np.flatnonzero(obs[i] != expected["observation"]))
    assert np.array_equal(mask[i], expected["action_mask"]), i


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**31), rules=st.sampled_from(RULES), n=st.integers(1, 4))
def test_every_table_steps_as_the_single_environment_over_whole_matches(seed, rules, n):
    tables = muushig.vector_env(n, seed=seed, **rules)
    singles = _singles(seed, n, rules)
    obs, mask, seat = tables.reset()
    rng = random.Random(seed)
    matches = [0] * n
    steps = 0
    while min(matches) < 2 and steps < 6000:
        for i, single in enumerate(singles):
            _assert_table_is_the_single_env(i, single, obs, mask, seat)
        actions = _random_actions(mask, rng)
        obs, mask, seat, rewards, done = tables.step(actions)
        steps += 1
        assert rewards.shape == (n, tables.n_seats) and done.shape == (n,)
        for i, single in enumerate(singles):
            single.step(int(actions[i]))
            # The single environment's rewards after the same step, every seat.
            assert rewards[i].tolist() == [single.rewards[agent_name(s)] for s in range(tables.n_seats)]
            assert done[i] == all(single.terminations.values())
            if done[i]:
                matches[i] += 1
                single.reset()  # the next match from the same rng, as the table's
    assert min(matches) >= 2


def test_the_single_environment_checked_by_pettingzoo_is_the_one_compared():
    # The comparison above is against raw_env(); the same configuration
    # passes PettingZoo's api_test (its outputs are the checked ones).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        api_test(muushig.raw_env(seed=3, players=3, last_two_forced=True), num_cycles=300)
    tables = muushig.vector_env(2, seed=3, players=3, last_two_forced=True)
    obs, mask, _ = tables.reset()
    for i in range(2):
        assert tables.single_observation_space.contains(obs[i])
        assert tables.single_action_space.n == mask.shape[1] and mask[i].any()


def test_a_match_rewards_its_stars_and_the_table_deals_the_next_at_once():
    tables = muushig.vector_env(3, seed=11, players=2, max_hands=1)
    obs, mask, seat = tables.reset()
    rng = random.Random(0)
    gained = np.zeros((3, 2))
    finished = 0
    while finished < 6:
        playing = list(tables._engines)
        obs, mask, seat, rewards, done = tables.step(_random_actions(mask, rng))
        gained += rewards
        for i in np.flatnonzero(done):
            finished += 1
            # The stars of the match just ended are the rewards paid during it.
            assert list(playing[i].result()["stars"]) == gained[i].tolist()
            gained[i] = 0
            # Its row is already the next match's first decision.
            fresh = tables._engines[i]
            assert fresh is not playing[i] and not fresh.finished and seat[i] == fresh.current_seat
            assert fresh.hand_number == 0 and fresh.round_number == 0


def test_the_same_seed_replays_the_same_matches_and_a_table_alone_plays_them_too():
    def run(tables, steps: int) -> list:
        seen = []
        obs, mask, seat = tables.reset(seed=5)
        rng = random.Random(1)
        for _ in range(steps):
            actions = _random_actions(mask, rng)
            obs, mask, seat, rewards, done = tables.step(actions)
            seen.append((obs.copy(), mask.copy(), seat.copy(), rewards.copy(), done.copy()))
        return seen

    four = muushig.vector_env(4, players=2, max_hands=2)
    first = run(four, 300)
    again = run(four, 300)  # reset(seed=5) starts the rngs again
    assert all(all(np.array_equal(a, b) for a, b in zip(x, y)) for x, y in zip(first, again))
    assert any(step[4].any() for step in first)  # some matches ended and were dealt again
    # Table 2 dealt from seed 5 + 2: a vector of one table on seed 7 deals the same.
    alone = muushig.vector_env(1, seed=7, players=2, max_hands=2)
    obs, mask, seat = alone.reset()
    assert np.array_equal(obs[0], four.reset(seed=5)[0][2])


def test_a_forbidden_action_is_refused_before_any_table_moves():
    tables = muushig.vector_env(3, seed=2)
    obs, mask, seat = tables.reset()
    decisions = [e.decision_number for e in tables._engines]
    legal = _random_actions(mask, random.Random(0))
    bad = legal.copy()
    bad[2] = 98  # a decide decision allows only fold and enter
    with pytest.raises(IllegalChoiceError, match=r"table 2: action 98 is not legal now; its mask allows \[0, 1\]"):
        tables.step(bad)
    for wrong, words in [(legal[:2], "one integer index per table, 3 of them"),
                         (legal.astype(np.float64), "type float64"),
                         (np.array([True, False, True]), "type bool"),
                         (np.array([0, 1, 99]), "table 2: action 99 is not legal"),
                         (np.array([-1, 0, 1]), "table 0: action -1 is not legal")]:
        with pytest.raises(IllegalChoiceError, match=words):
            tables.step(wrong)
    assert [e.decision_number for e in tables._engines] == decisions
    tables.step(legal)  # the legal ones still play
    assert [e.decision_number for e in tables._engines] != decisions


def test_a_caller_writing_into_the_mask_buffer_cannot_unlock_an_action():
    # With copy=False the mask is the environment's own buffer; a caller
    # may write into it (a policy masking in place). What a table allows is
    # what its engine allows, not what the buffer says afterwards.
    tables = muushig.vector_env(2, seed=2, copy=False)
    obs, mask, seat = tables.reset()
    decisions = [e.decision_number for e in tables._engines]
    legal = _random_actions(mask, random.Random(0))
    mask[:] = 1
    bad = legal.copy()
    bad[1] = 98  # a decide decision allows only fold and enter
    with pytest.raises(IllegalChoiceError, match=r"table 1: action 98 is not legal now; its mask allows \[0, 1\]"):
        tables.step(bad)
    assert [e.decision_number for e in tables._engines] == decisions
    tables.step(legal)
    assert [e.decision_number for e in tables._engines] != decisions


def test_returned_arrays_are_copies_unless_asked_for_the_buffers():
    tables = muushig.vector_env(2, seed=4)
    obs, mask, seat = tables.reset()
    kept = obs.copy(), mask.copy()
    rng = random.Random(0)
    for _ in range(20):
        tables.step(_random_actions(tables._mask, rng))
    assert np.array_equal(obs, kept[0]) and np.array_equal(mask, kept[1])
    shared = muushig.vector_env(2, seed=4, copy=False)
    obs, mask, seat = shared.reset()
    again = shared.step(_random_actions(mask, rng))
    assert again[0] is obs and again[1] is mask  # the same buffers, written again


def test_bad_settings_are_refused_with_the_reason():
    with pytest.raises(RuleConfigError):
        muushig.vector_env(2, players=9)
    with pytest.raises(ValueError, match="at least 1"):
        muushig.vector_env(0)
    with pytest.raises(RuntimeError, match="reset"):
        muushig.vector_env(1).step(np.zeros(1, dtype=np.int64))
