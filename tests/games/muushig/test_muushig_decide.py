"""Rules §4: enter or fold, all fold, the forced dealer."""

import pytest

from arena.games.base import IllegalActionError

from .helpers import act, all_cards, engine_with, kinds, of_kind


def test_decisions_go_clockwise_from_left_of_dealer_and_dealer_last():
    engine, _ = engine_with([all_cards()])
    order = []
    for choice in ["enter", "enter", "fold", "fold", "fold"]:
        assert engine.phase == "decide" and engine.legal_actions() == ["enter", "fold"]
        order.append(engine.current_seat)
        act(engine, choice)
    assert order == [1, 2, 3, 4, 0]


def test_all_fold_dealer_not_asked_takes_five_tricks_minus_five():
    engine, _ = engine_with([all_cards()])
    events = act(engine, "fold", "fold", "fold", "fold")
    decided = [e["seat"] for e in of_kind(events, "decision")]
    assert decided == [1, 2, 3, 4]  # no decision event for the dealer
    assert of_kind(events, "all_folded") == [{"kind": "all_folded", "dealer": 0, "scores": [10, 15, 15, 15, 15]}]
    assert of_kind(events, "hand_end") == [
        {"kind": "hand_end", "tricks": [5, 0, 0, 0, 0], "muushig": [], "scores": [10, 15, 15, 15, 15]}
    ]
    assert "exchange" not in kinds(events) and "play" not in kinds(events)
    assert engine.observation(0)["hand"] == 1 and engine.observation(0)["dealer"] == 1


def test_exactly_one_entrant_forces_the_dealer_in_without_asking():
    engine, _ = engine_with([all_cards()])
    events = act(engine, "fold", "enter", "fold", "fold")
    assert of_kind(events, "decision")[-1] == {"kind": "decision", "seat": 0, "choice": "enter", "forced": True}
    assert engine.phase == "exchange" and engine.current_seat == 2


def test_two_entrants_leave_the_dealer_free():
    engine, _ = engine_with([all_cards()])
    act(engine, "enter", "enter", "fold", "fold")
    assert engine.current_seat == 0 and engine.phase == "decide"
    events = act(engine, "fold")
    assert of_kind(events, "decision")[0]["forced"] is False
    assert engine.current_seat == 1 and engine.phase == "exchange"


def test_folded_seat_keeps_its_score_and_is_not_asked_again():
    engine, _ = engine_with([all_cards()])
    act(engine, "enter", "fold", "enter", "fold", "fold")
    asked = set()
    while engine.phase is not None and engine.observation(0)["hand"] == 0:
        asked.add(engine.current_seat)
        act(engine, engine.default_action())
    assert asked == {1, 3}


def test_round_ends_right_after_an_all_fold_brings_the_dealer_to_zero():
    engine, events = engine_with([], seed=3)
    # Everyone always folds: each hand the dealer takes 5 tricks; seat 0 deals
    # hands 0, 5 and 10 and reaches 0 on the third.
    while engine.observation(0)["round"] == 0:
        events += act(engine, "fold")
    ends = of_kind(events, "round_end")
    assert ends == [{"kind": "round_end", "round": 0, "winner": 0, "scores": [0, 5, 5, 5, 5]}]
    assert len(of_kind(events, "hand_end")) == 11
    assert not engine.finished
    assert of_kind(events, "round_start")[-1] == {
        "kind": "round_start", "round": 1, "dealer": 1, "scores": [15, 15, 15, 15, 15]
    }
    assert engine.observation(0)["stars"] == [1, 0, 0, 0, 0]


def test_bad_decision_is_refused_with_the_choices():
    engine, _ = engine_with([all_cards()])
    with pytest.raises(IllegalActionError, match="enter.*fold"):
        engine.check_action("pass")
    assert engine.check_action("enter").action == "enter"
