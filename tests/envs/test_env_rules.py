"""What the environments promise: each seat sees only what the server would
send it, the mask is exactly the legal list, rewards add up to the match
result, and house bots play the seats given to them."""

from __future__ import annotations

import random

import numpy as np
import pytest

pytest.importorskip("pettingzoo", reason="the rl extra: pip install -e '.[rl]'")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from arena.envs import muushig, thirteen  # noqa: E402
from arena.envs.codec import IllegalChoiceError  # noqa: E402
from arena.games.thirteen.arranger import best_arrangement, ranked_arrangements  # noqa: E402
from arena.games.thirteen.cards import CARD_INDEX, card_strs, deal_hands  # noqa: E402
from arena.games.thirteen.wire import check_arrangement  # noqa: E402

MUUSHIG_RULES = st.sampled_from([{}, {"players": 3, "last_two_forced": True},
                                 {"players": 2}, {"auto_enter_after_folds": 3, "trump_ace_first_lead": True}])


def play(env, choose=None, *, on_turn=None, on_info=None):
    """Play one match to its end; returns each agent's summed rewards.
    ``on_turn`` sees each live turn, ``on_info`` every agent's info, also
    the last one (given with the termination)."""
    rng = random.Random(0)
    totals: dict[str, float] = {}
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        totals[agent] = totals.get(agent, 0.0) + reward
        if on_info is not None:
            on_info(agent, info)
        if terminated or truncated:
            env.step(None)
            continue
        if on_turn is not None:
            on_turn(agent, obs, info)
        mask = obs["action_mask"]
        env.step(choose(agent, obs) if choose else int(rng.choice(np.flatnonzero(mask))))
    return totals


def _equal(a, b) -> bool:
    return all(np.array_equal(a[k], b[k]) for k in ("observation", "action_mask"))


# ------------------------------------------------------- hidden cards


def test_a_muushig_observation_does_not_change_when_other_seats_hands_do():
    env = muushig.env(seed=3)
    env.reset()
    raw = env.unwrapped
    checked = 0

    def swap_others(agent, obs, info):
        nonlocal checked
        me = int(agent.split("_")[1])
        hands = raw.engine.hand.hands
        others = [s for s in range(5) if s != me and hands[s]]
        if len(others) >= 2:
            a, b = others[:2]
            hands[a], hands[b] = hands[b], hands[a]  # hidden cards only: my view must not move
            raw._pending = None  # build the observation again from the engine
            assert _equal(raw.observe(agent), obs)
            hands[a], hands[b] = hands[b], hands[a]
            checked += 1

    play(env, on_turn=swap_others)
    assert checked > 50


def test_a_thirteen_observation_does_not_change_when_other_seats_hands_do():
    env = thirteen.env(seed=3, deals=2)
    env.reset()
    raw = env.unwrapped
    checked = 0

    def swap_others(agent, obs, info):
        nonlocal checked
        me = int(agent.split("_")[1])
        hands = list(raw.engine._hands)
        a, b = [s for s in range(4) if s != me][:2]
        hands[a], hands[b] = hands[b], hands[a]
        kept, raw.engine._hands = raw.engine._hands, tuple(hands)
        raw._pending = None  # build the observation again from the engine
        assert _equal(raw.observe(agent), obs)
        raw.engine._hands = kept
        checked += 1

    play(env, on_turn=swap_others)
    assert checked == 8


@pytest.mark.parametrize("make", [lambda: muushig.env(seed=5), lambda: thirteen.env(seed=5, deals=3)])
def test_the_events_an_agent_is_given_are_its_own_views(make):
    # A bot that keeps everything it is sent: no deck, no other seat's hand.
    env = make()
    env.reset()
    kept: dict[str, list] = {}
    play(env, on_info=lambda agent, info: kept.setdefault(agent, []).extend(info["events"]))
    kinds = {e["kind"] for events in kept.values() for e in events}
    assert "deal" not in kinds  # the deck (commitments are the server's business)
    assert all("hands" not in e for events in kept.values() for e in events)
    decks = [d.deck for d in env.unwrapped.engine.deals()]
    for agent, events in kept.items():
        me = int(agent.split("_")[1])
        starts = [e for e in events if e["kind"] in ("hand_start", "deal_start")]
        assert len(starts) == len(decks)
        for start, deck in zip(starts, decks):  # its own dealt cards, nobody else's
            assert sorted(start["cards"]) == sorted(_dealt(deck, me, start.get("dealer")))


def _dealt(deck, seat, dealer):
    if dealer is None:  # thirteen: card i to hand i mod 4
        return list(deck[seat::4])
    n = 5  # Muushig: card i to seat (dealer + 1 + i) mod n, five each
    return list(deck[(seat - dealer - 1) % n:5 * n:n])


# ------------------------------------------------------- masks and actions


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), rules=MUUSHIG_RULES)
def test_the_muushig_mask_is_exactly_the_legal_list(seed, rules):
    env = muushig.env(seed=seed, **rules)
    env.reset()
    raw = env.unwrapped

    def check(agent, obs, info):
        phase, legal, state = raw.request(agent)
        decoded = [raw.codec.decode(i, phase, legal, state) for i in np.flatnonzero(obs["action_mask"])]
        key = lambda a: repr(a)  # noqa: E731
        assert sorted(decoded, key=key) == sorted(legal, key=key)

    play(env, on_turn=check)


def test_an_illegal_index_is_refused_and_changes_nothing():
    env = muushig.env(seed=2)
    env.reset()
    obs = env.last()[0]
    before = env.unwrapped.engine.observation(0)
    with pytest.raises(IllegalChoiceError, match="is not legal now; the mask allows"):
        env.step(98)  # play the ace of clubs: not in the decide phase
    with pytest.raises(IllegalChoiceError, match="integer index"):
        env.step("enter")
    assert env.unwrapped.engine.observation(0) == before
    assert _equal(env.unwrapped.observe(env.agent_selection), obs)


def test_thirteen_candidates_are_distinct_unfouled_and_the_first_is_the_strong_bots():
    rng = random.Random(11)
    for wheel, mfh in [("lowest", 2), ("second_highest", 1)]:
        for _ in range(5):
            hand = tuple(sorted(rng.sample(range(52), 13)))
            ranked = ranked_arrangements(hand, 16, wheel, mfh)
            assert ranked[0].split == best_arrangement(hand, wheel, mfh)
            assert len({r.split for r in ranked}) == 16
            totals = [r.total for r in ranked]
            assert totals == sorted(totals, reverse=True)
            for r in ranked:  # reject_fouls: a fouled arrangement would raise
                wire = {"front": card_strs(r.split.front), "middle": card_strs(r.split.middle),
                        "back": card_strs(r.split.back)}
                assert check_arrangement(wire, hand, wheel, reject_fouls=True) == r.split


def test_a_thirteen_action_is_its_candidate_arrangement():
    env = thirteen.env(seed=4, deals=1)
    env.reset()
    raw = env.unwrapped
    phase, constraints, state = raw.request(env.agent_selection)
    best = raw.codec.candidates(state["cards"])[0].split
    wire = raw.codec.decode(0, phase, constraints, state)
    assert wire == {"front": card_strs(best.front), "middle": card_strs(best.middle),
                    "back": card_strs(best.back)}


# ------------------------------------------------------- rewards


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), rules=MUUSHIG_RULES)
def test_muushig_rewards_add_up_to_each_seats_stars(seed, rules):
    env = muushig.env(seed=seed, **rules)
    env.reset()
    raw = env.unwrapped
    engine = raw.engine
    totals = play(env)
    assert [totals[f"player_{s}"] for s in range(engine.n_seats)] == engine.result()["stars"]


def test_thirteen_rewards_add_up_to_each_seats_total():
    env = thirteen.env(seed=9, deals=3, players=3)
    env.reset()
    engine = env.unwrapped.engine
    totals = play(env)
    assert [totals[f"player_{s}"] for s in range(3)] == engine.result()["totals"]


# ------------------------------------------------------- house bots


def test_house_bots_take_their_seats_and_play_them():
    env = muushig.env(seed=1, opponents={0: "heuristic", 1: "heuristic"})
    assert env.possible_agents == ["player_2", "player_3", "player_4"]
    stars = [0] * 5
    for _ in range(12):
        env.reset()
        play(env)
        stars = [a + b for a, b in zip(stars, env.unwrapped.engine.result()["stars"])]
    # 60 rounds: the heuristic seats beat the agents playing uniformly at random.
    assert stars[0] + stars[1] > stars[2] + stars[3] + stars[4]


def test_a_strong_house_bot_plays_the_best_arrangement():
    env = thirteen.env(seed=2, deals=3, wheel="second_highest", opponents={1: "strong"})
    env.reset()
    kept: list = []
    play(env, on_info=lambda agent, info: kept.extend(info["events"]) if agent == "player_0" else None)
    showdowns = [e for e in kept if e["kind"] == "showdown"]
    decks = [d.deck for d in env.unwrapped.engine.deals()]
    assert len(showdowns) == len(decks) == 3
    for showdown, deck in zip(showdowns, decks):
        hand = deal_hands(tuple(CARD_INDEX[c] for c in deck))[1]
        best = best_arrangement(hand, "second_highest", 2)
        assert showdown["arrangements"][1] == {"front": card_strs(best.front),
                                               "middle": card_strs(best.middle), "back": card_strs(best.back)}
