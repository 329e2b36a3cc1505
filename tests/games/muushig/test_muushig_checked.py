"""An answer is checked once: ``apply`` uses what ``check_for`` (or
``check_action``) worked out, and a checked action is good for the
decision of the seat it was checked for only."""

from __future__ import annotations

import random

import pytest

from arena.games.base import CheckedAction, IllegalActionError, NotYourTurnError, StaleActionError
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
        engine.play(choice(engine.legal_actions()))
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
        engine.apply(engine.check_for(seat, choice(engine.request_for(seat)["legal"])))
        decisions += 1
    assert len(calls) == decisions


@pytest.mark.source_only  # subclasses or patches a compiled class
def test_play_checks_once(monkeypatch):
    calls = _counting_checks(monkeypatch)
    engine = _at_play()
    calls.clear()
    engine.play(engine.legal_actions()[0])
    assert len(calls) == 1


def test_a_checked_action_names_its_seat_decision_and_canonical_form():
    engine = MuushigEngine(None, random.Random(3))
    engine.start()
    seat = engine.current_seat
    checked = engine.check_for(seat, "enter")
    assert isinstance(checked, CheckedAction)
    assert (checked.seat, checked.decision, checked.action) == (seat, engine.decision_number, "enter")


def test_applying_the_checked_action_equals_playing_the_wire_action():
    checked, plain = MuushigEngine(None, random.Random(7)), MuushigEngine(None, random.Random(7))
    assert checked.start() == plain.start()
    choice = random.Random(8).choice
    while not plain.finished:
        seat = plain.current_seat
        legal = choice(plain.legal_actions())
        # Any order: the canonical one is the legal list's (sorted).
        action = list(reversed(legal)) if isinstance(legal, list) else legal
        answer = checked.check_for(seat, action)
        assert answer.action == legal
        assert checked.apply(answer) == plain.play(action)
        assert checked.observation(seat) == plain.observation(seat)
    assert checked.result() == plain.result()


def test_a_check_from_before_the_state_moved_on_changes_nothing():
    engine = _at_play()
    seat = engine.current_seat
    legal = engine.legal_actions()
    stale = engine.check_for(seat, legal[0])
    engine.play_for(seat, legal[-1])
    following = engine.current_seat
    seen = engine.observation(following)
    with pytest.raises(StaleActionError, match=f"seat {seat}'s '{legal[0]}' was checked for decision"):
        engine.apply(stale)
    assert engine.current_seat == following and engine.observation(following) == seen


def test_a_check_is_for_the_seat_to_act_only():
    engine = _at_play()
    seat = engine.current_seat
    card = engine.legal_actions()[0]
    other = (seat + 1) % engine.n_seats
    with pytest.raises(NotYourTurnError, match=f"seat {other} owes no decision now"):
        engine.check_for(other, card)
    with pytest.raises(NotYourTurnError, match=f"seat {other} owes no decision now"):
        engine.play_for(other, card)
    assert engine.current_seat == seat and engine.apply(engine.check_for(seat, card))[0].seat == seat


def test_a_failed_check_leaves_an_earlier_check_good_and_play_gives_the_same_reason():
    engine = _at_play()
    seat = engine.current_seat
    card = engine.legal_actions()[0]
    checked = engine.check_for(seat, card)
    with pytest.raises(IllegalActionError) as by_check:
        engine.check_for(seat, "ZZ")
    with pytest.raises(IllegalActionError) as by_play:
        engine.play_for(seat, "ZZ")
    assert str(by_check.value) == str(by_play.value) and "malformed card 'ZZ'" in str(by_check.value)
    assert engine.apply(checked)[0].for_record()["card"] == card


def test_nothing_is_checked_or_applied_after_the_match_ended():
    engine = MuushigEngine(None, random.Random(4))
    engine.start()
    while not engine.finished:
        last = engine.check_action(engine.default_action())
        engine.apply(last)
    with pytest.raises(StaleActionError, match="already, or the match moved on"):
        engine.apply(last)
    with pytest.raises(NotYourTurnError, match="over"):
        engine.check_action("fold")
