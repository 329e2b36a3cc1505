"""An answer is checked once: applying the canonical action ``check_for``
(or ``check_action``) just returned does not check it again, and a check
is good for that seat's pending decision only."""

from __future__ import annotations

import random

import pytest

from arena.games.base import IllegalActionError, NotYourTurnError
from arena.games.muushig import MuushigEngine
from arena.games.muushig.wire import WireFace


def _counting_checks(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    calls: list[object] = []
    check = WireFace.check

    def counted(self: WireFace, action: object) -> tuple:
        calls.append(action)
        return check(self, action)

    monkeypatch.setattr(WireFace, "check", counted)
    return calls


def _at_play(seed: int = 5) -> MuushigEngine:
    engine = MuushigEngine(None, random.Random(seed))
    engine.start()
    choice = random.Random(seed).choice
    while engine.phase != "play":
        engine.apply(choice(engine.legal_actions()))
    return engine


@pytest.mark.source_only  # subclasses or patches a compiled class
def test_a_bots_answer_is_checked_once_per_decision(monkeypatch):
    calls = _counting_checks(monkeypatch)
    engine = MuushigEngine(None, random.Random(1))
    engine.start()
    choice = random.Random(2).choice
    decisions = 0
    while not engine.finished:
        seat = engine.to_act[0]
        canonical = engine.check_for(seat, choice(engine.request_for(seat)["legal"]))
        engine.apply_for(seat, canonical)
        decisions += 1
    assert len(calls) == decisions


@pytest.mark.source_only  # subclasses or patches a compiled class
def test_check_action_then_apply_checks_once(monkeypatch):
    calls = _counting_checks(monkeypatch)
    engine = _at_play()
    calls.clear()
    engine.apply(engine.check_action(engine.legal_actions()[0]))
    assert len(calls) == 1


def test_applying_the_checked_action_equals_applying_the_wire_action():
    checked, plain = MuushigEngine(None, random.Random(7)), MuushigEngine(None, random.Random(7))
    assert checked.start() == plain.start()
    choice = random.Random(8).choice
    while not plain.finished:
        seat = plain.current_seat
        action = choice(plain.legal_actions())
        if isinstance(action, list):
            action = list(reversed(action))  # any order: the canonical one is sorted
        canonical = checked.check_for(seat, action)
        assert checked.apply_for(seat, canonical) == plain.apply(action)
        assert checked.observation(seat) == plain.observation(seat)
    assert checked.result() == plain.result()


def test_an_equal_action_uses_the_check_as_the_same_object_would():
    engine = _at_play()
    seat = engine.current_seat
    card = engine.legal_actions()[0]
    engine.check_for(seat, card)
    events = engine.apply_for(seat, "".join(list(card)))  # equal, not the same object
    assert events[0].for_record() == {"kind": "play", "seat": seat, "card": card}


def test_a_check_is_not_used_once_the_state_moved_on():
    engine = _at_play()
    seat = engine.current_seat
    legal = engine.legal_actions()
    engine.check_for(seat, legal[0])
    # The seat plays another card instead (when it has a choice), or the
    # same: either way the next seat does not hold the checked card.
    engine.apply_for(seat, legal[-1])
    following = engine.current_seat
    with pytest.raises(IllegalActionError, match=f"not a card in your hand: {legal[0]}"):
        engine.apply_for(following, legal[0])


def test_a_check_is_used_once():
    engine = MuushigEngine(None, random.Random(3))
    engine.start()
    seat = engine.current_seat
    engine.check_for(seat, "enter")
    engine.apply_for(seat, "enter")
    with pytest.raises(NotYourTurnError):
        engine.apply_for(seat, "enter")  # the next seat is to decide


def test_a_checked_action_cannot_be_applied_for_another_seat():
    engine = _at_play()
    seat = engine.current_seat
    card = engine.legal_actions()[0]
    engine.check_for(seat, card)
    other = (seat + 1) % engine.n_seats
    with pytest.raises(NotYourTurnError, match=f"seat {other} owes no decision now"):
        engine.apply_for(other, card)
    assert engine.current_seat == seat and engine.apply_for(seat, card)[0].for_record()["card"] == card


def test_a_failed_check_leaves_the_good_answer_checked_and_gives_the_same_reason():
    engine = _at_play()
    seat = engine.current_seat
    card = engine.legal_actions()[0]
    engine.check_for(seat, card)
    with pytest.raises(IllegalActionError) as by_check:
        engine.check_for(seat, "ZZ")
    with pytest.raises(IllegalActionError) as by_apply:
        engine.apply_for(seat, "ZZ")
    assert str(by_check.value) == str(by_apply.value) and "malformed card 'ZZ'" in str(by_check.value)
    assert engine.apply_for(seat, card)[0].for_record()["card"] == card


def test_a_check_after_the_match_ended_is_refused():
    engine = MuushigEngine(None, random.Random(4))
    engine.start()
    while not engine.finished:
        seat = engine.current_seat
        action = engine.check_action(engine.default_action())
        engine.apply_for(seat, action)
    with pytest.raises(NotYourTurnError, match="over"):
        engine.apply(action)
