"""The checker's own small reading of the rules, and its scripted matches."""

import random

import pytest

from arena.checkbot.hand import (
    FULL_DECK,
    Ask,
    HandSetup,
    HousePlan,
    Phase,
    Tell,
    canonical,
    commitment,
    exchange_options,
    playable,
    take_options,
    trick_winner,
)
from arena.checkbot.script import match_a, match_b

STATE_FIELDS = {"round", "hand", "dealer", "seat", "trump", "face_up", "cards", "scores", "stars", "status",
                "stock", "face_up_taken", "trick", "leader", "tricks", "played"}


def test_a_held_ace_may_lead_its_suit_only_itself():
    assert playable(["KS", "AS", "7H"], [], "D") == ["7H", "AS"]


def test_a_follower_holding_a_higher_card_of_the_led_suit_must_play_it():
    assert playable(["9H", "QH", "7S"], [(0, "TH")], "S") == ["QH"]


def test_once_trumped_any_card_of_the_led_suit_will_do():
    assert playable(["9H", "QH", "7S"], [(0, "TH"), (1, "7S")], "S") == ["9H", "QH"]


def test_without_the_led_suit_a_trump_must_beat_the_trumps_played_if_it_can():
    assert playable(["7S", "JS", "8D"], [(0, "TH"), (1, "9S")], "S") == ["JS"]
    assert playable(["7S", "8D"], [(0, "TH"), (1, "9S")], "S") == ["7S"]


def test_with_neither_the_led_suit_nor_a_trump_any_card_will_do():
    assert playable(["8D", "7C"], [(0, "TH")], "S") == ["8D", "7C"]


def test_the_highest_trump_wins_else_the_highest_of_the_led_suit():
    assert trick_winner([(0, "TH"), (1, "AH"), (2, "7S")], "S") == 2
    assert trick_winner([(3, "TH"), (4, "AD"), (0, "QH")], "S") == 0


def test_exchange_sets_are_ordered_by_size_then_card_by_card():
    assert exchange_options(["AS", "7H", "8H"], 2) == [
        [], ["7H"], ["8H"], ["AS"], ["7H", "8H"], ["7H", "AS"], ["8H", "AS"],
    ]


def test_take_offers_decline_first_then_every_card():
    assert take_options(["AS", "7H"]) == [None, "7H", "AS"]


def test_commitment_is_sha256_of_salt_colon_deck():
    import hashlib

    deck = list(FULL_DECK)
    expected = hashlib.sha256(("s1:" + ",".join(deck)).encode()).hexdigest()
    assert commitment("s1", deck) == expected


def test_a_deck_must_hold_every_card_once():
    with pytest.raises(ValueError, match="32 cards"):
        HandSetup(round=0, hand=0, dealer=0, deck=tuple(FULL_DECK[:-1]) + ("AS",), salt="x", plan=HousePlan())


def _play_out(match, rng):
    """Walk a scripted match with random legal answers; return its steps."""
    steps = []
    while (step := match.next_step()) is not None:
        steps.append(step)
        if isinstance(step, Ask):
            match.settle(rng.choice(step.legal))
    return steps


@pytest.mark.parametrize("seed", range(40))
def test_every_scripted_request_is_consistent_with_its_state(seed):
    steps = _play_out(match_a("bot", 1000), random.Random(seed))
    asks = [s for s in steps if isinstance(s, Ask)]
    for ask in asks:
        state = ask.state
        assert set(state) >= STATE_FIELDS
        cards = state["cards"]
        assert cards == canonical(cards)
        if ask.phase is Phase.PLAY:
            assert ask.legal == playable(cards, [tuple(e) for e in state["trick"]], state["trump"])
        elif ask.phase is Phase.EXCHANGE:
            assert {c for option in ask.legal for c in option} == set(cards)
            assert max(len(o) for o in ask.legal) == min(5, state["stock"])
        elif ask.phase is Phase.TAKE:
            assert ask.legal == take_options(cards)
        else:
            assert ask.legal == ["enter", "fold"]
    # The checks rely on hand 1 giving the bot exchange, take and five plays.
    hand1 = [a for a in asks if a.state["hand"] == 1]
    assert [a.phase for a in hand1] == [Phase.EXCHANGE, Phase.TAKE] + [Phase.PLAY] * 5
    assert len(hand1[2].legal) >= 2, "the illegal_action check needs a play with a choice"
    kinds = [s.event["kind"] for s in steps if isinstance(s, Tell)]
    assert kinds[:3] == ["round_start", "commit", "hand_start"]
    assert kinds.count("hand_end") == 2


def test_events_follow_the_bots_answers():
    match = match_a("bot", 1000)
    steps = []
    while (step := match.next_step()) is not None:
        steps.append(step)
        if isinstance(step, Ask):
            match.settle("fold" if step.phase is Phase.DECIDE else step.legal[0])
    events = [s.event for s in steps if isinstance(s, Tell)]
    # Everyone folded in hand 0: the dealer took five tricks unasked.
    assert {"kind": "all_folded", "dealer": 0, "scores": [10, 15, 15, 15, 15]} in events
    assert {"kind": "decision", "seat": 1, "choice": "enter", "forced": True} in events


def test_match_end_reveals_every_deck_with_its_commitment():
    match = match_b("bot", 1000, first_id=7)
    steps = _play_out(match, random.Random(1))
    commits = [s.event["commitment"] for s in steps if isinstance(s, Tell) and s.event["kind"] == "commit"]
    end = match.match_end()
    assert [commitment(r["salt"], r["deck"]) for r in end["reveal"]] == commits
    assert (match.take_id(), match.take_id()) == (7, 8)
