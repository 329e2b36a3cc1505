"""The fast paths of the environments give what the reference ones give:
Muushig's observations read from the engine equal the codec's encoding of
the wire request (the protocol bot's arrays), for every seat at every step;
an index applied through the engine's codes is the wire action the codec
decodes; observations a caller keeps are never written again; the events in
``info`` read late are the views made at once."""

from __future__ import annotations

import random

import numpy as np
import pytest

pytest.importorskip("pettingzoo", reason="the rl extra: pip install -e '.[rl]'")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from arena.envs import muushig, thirteen  # noqa: E402
from arena.envs.aec import CodecFace, SeatEvents  # noqa: E402
from arena.envs.codec import IllegalChoiceError  # noqa: E402

RULES = st.sampled_from([
    {},
    {"players": 2},
    {"players": 3, "last_two_forced": True},
    {"players": 4, "auto_enter_after_folds": 2, "trump_ace_first_lead": True, "max_hands": 3},
    {"max_hands": 1},
])


def _same(a, b) -> bool:
    return (a["observation"].dtype == b["observation"].dtype and a["action_mask"].dtype == b["action_mask"].dtype
            and np.array_equal(a["observation"], b["observation"])
            and np.array_equal(a["action_mask"], b["action_mask"]))


def _check_every_seat(raw, reference: CodecFace) -> None:
    engine = raw.engine
    for seat in raw.seats:
        acting = seat in engine.to_act
        fast = raw.face.observe(engine, seat, acting)
        wire = reference.observe(engine, seat, acting)
        assert _same(fast, wire), (seat, engine.phase, np.flatnonzero(fast["observation"] != wire["observation"]))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), rules=RULES, house=st.booleans())
def test_muushig_observations_from_the_engine_equal_the_wire_encoding(seed, rules, house):
    opponents = {1: "heuristic"} if house else None
    env = muushig.env(seed=seed, opponents=opponents, **rules)
    env.reset()
    raw = env.unwrapped
    reference = CodecFace(raw.codec)
    rng = random.Random(seed)
    checked = 0
    for agent in env.agent_iter():
        _check_every_seat(raw, reference)  # before last(): nothing kept from an earlier call
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        assert _same(obs, reference.observe(raw.engine, raw._seat_of[agent], True))
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        checked += 1
    _check_every_seat(raw, reference)  # the finished match
    assert checked > 20


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), rules=RULES)
def test_a_muushig_index_plays_the_wire_action_the_codec_decodes(seed, rules):
    # Two environments on one seed: one steps through the engine's codes,
    # the other through the codec's wire actions; every event is the same.
    fast, wire = muushig.raw_env(seed=seed, **rules), muushig.raw_env(seed=seed, **rules)
    wire.face = CodecFace(wire.codec)
    fast.reset()
    wire.reset()
    rng = random.Random(seed)
    for agent in fast.agent_iter():
        obs, _, terminated, truncated, info = fast.last()
        other = wire.last()
        assert agent == wire.agent_selection and (terminated, truncated) == other[2:4]
        assert list(info["events"]) == list(other[4]["events"])
        action = None if terminated or truncated else int(rng.choice(np.flatnonzero(obs["action_mask"])))
        fast.step(action)
        wire.step(action)
    assert fast.engine.result() == wire.engine.result()


def test_a_refused_muushig_index_changes_nothing_and_says_why():
    env = muushig.raw_env(seed=4)
    env.reset()
    before = env.engine.observation(env._seat_of[env.agent_selection])
    for bad, words in [(98, "is not legal now; the mask allows [0, 1]"), (99, "outside the action space"),
                       (-1, "outside the action space"), (True, "integer index")]:
        with pytest.raises(IllegalChoiceError, match=words.replace("[", r"\[").replace("]", r"\]")):
            env.step(bad)
    # Also when no observation was asked for first (the mask is made then).
    env._pending = None
    with pytest.raises(IllegalChoiceError, match="is not legal now"):
        env.step(70)
    assert env.engine.observation(env._seat_of[env.agent_selection]) == before


@pytest.mark.parametrize("make, matches", [(lambda: muushig.raw_env(seed=8), 3),
                                           (lambda: thirteen.raw_env(seed=8, deals=2), 1)])
def test_kept_observations_are_never_written_again(make, matches):
    # A learner that keeps every observation (a replay buffer without copies).
    env = make()
    kept: list[tuple[dict, dict]] = []
    rng = random.Random(0)
    for _ in range(matches):
        env.reset()
        for agent in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            kept.append((obs, {k: v.copy() for k, v in obs.items()}))
            for other in env.agents:  # the other seats' views, made from the same rows
                seen = env.observe(other)
                kept.append((seen, {k: v.copy() for k, v in seen.items()}))
            if terminated or truncated:
                env.step(None)
                continue
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert len(kept) > (300 if matches > 1 else 20)
    assert all(_same(obs, copy) for obs, copy in kept)


@pytest.mark.parametrize("make", [lambda: muushig.env(seed=6), lambda: thirteen.env(seed=6, deals=2)])
def test_events_read_late_are_the_views_made_at_once(make):
    def play(read_now: bool) -> dict[str, list]:
        env = make()
        env.reset()
        rng = random.Random(1)
        got: dict[str, list] = {}
        for agent in env.agent_iter():
            obs, _, terminated, truncated, info = env.last()
            events = info["events"]
            got.setdefault(agent, []).append(list(events) if read_now else events)
            env.step(None if terminated or truncated
                     else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        return got

    now, late = play(True), play(False)
    assert now.keys() == late.keys()
    for agent in now:
        assert [list(e) for e in late[agent]] == now[agent]
        assert late[agent] == now[agent]  # a SeatEvents equals its list
    assert sum(len(v) for views in now.values() for v in views) > 30


def test_seat_events_is_a_read_only_sequence_of_one_seats_views():
    env = muushig.raw_env(seed=2)
    env.reset()
    events = env.infos[env.agent_selection]["events"]
    assert isinstance(events, SeatEvents)
    assert len(events) == len(list(events)) > 0
    assert events[0]["kind"] == "round_start" and events[-1:] == [events[len(events) - 1]]
    assert [e["kind"] for e in events].count("hand_start") == 1
    assert "cards" in next(e for e in events if e["kind"] == "hand_start")  # its own five
    assert events != [] and repr(events).startswith("[{")


def test_seat_events_pickle_and_copy_as_the_list_of_views():
    # A vector environment sends infos to another process.
    import copy
    import pickle

    env = muushig.env(seed=2)
    env.reset()
    events = env.last()[4]["events"]
    for moved in (pickle.loads(pickle.dumps(events)), copy.deepcopy(events), copy.copy(events)):
        assert type(moved) is list and moved == list(events) and moved == events
