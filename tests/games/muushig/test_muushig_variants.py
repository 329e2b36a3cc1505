"""The optional rule flags (rules page, Variants) and their validation."""

import random

import pytest

from arena.games.base import IllegalActionError, RuleConfigError
from arena.games.muushig import SPEC, MuushigEngine

from .helpers import act, all_cards, deck_for_hands, engine_with, of_kind, table


def test_defaults_are_all_off():
    assert MuushigEngine().rules == {
        "max_hands": 200,
        "last_two_forced": False,
        "auto_enter_after_folds": 0,
        "trump_ace_first_lead": False,
        "players": 5,
    }


@pytest.mark.parametrize(
    "rules, needle",
    [
        ({"jokers": True}, "unknown Muushig rule option"),
        ({"max_hands": 0}, "max_hands must be an integer from 1"),
        ({"max_hands": "200"}, "max_hands"),
        ({"players": 6}, "players must be an integer from 2 to 5"),
        ({"players": True}, "players"),
        ({"last_two_forced": 1}, "last_two_forced must be true or false"),
        ({"auto_enter_after_folds": -1}, "auto_enter_after_folds"),
        ({"trump_ace_first_lead": "yes"}, "trump_ace_first_lead"),
    ],
)
def test_bad_rules_are_refused_clearly(rules, needle):
    with pytest.raises(RuleConfigError, match=needle):
        SPEC.new_match(rules, random.Random(0), None)


def test_bad_decks_are_refused():
    with pytest.raises(RuleConfigError, match="not an order of the 32 cards"):
        MuushigEngine(None, None, [all_cards()[:-1]])
    with pytest.raises(RuleConfigError, match="malformed"):
        MuushigEngine(None, None, [["ZZ"] * 32])


def test_last_two_forced_when_the_first_three_fold():
    engine, _ = engine_with([all_cards()], {"last_two_forced": True})
    events = act(engine, "fold", "fold", "fold")
    assert of_kind(events, "decision")[3:] == [
        {"kind": "decision", "seat": 4, "choice": "enter", "forced": True},
        {"kind": "decision", "seat": 0, "choice": "enter", "forced": True},
    ]
    assert engine.phase == "exchange" and engine.current_seat == 4


def test_last_two_forced_does_not_apply_once_someone_entered():
    engine, _ = engine_with([all_cards()], {"last_two_forced": True})
    act(engine, "fold", "enter", "fold")
    assert engine.current_seat == 4 and engine.phase == "decide"


def test_without_the_flag_the_fourth_seat_is_asked():
    engine, _ = engine_with([all_cards()])
    act(engine, "fold", "fold", "fold")
    assert engine.current_seat == 4 and engine.phase == "decide"


def test_auto_enter_counts_folds_and_resets_on_entering():
    engine, events = engine_with([], {"auto_enter_after_folds": 3}, seed=4)
    while engine.observation(0)["hand"] < 6 and engine.observation(0)["round"] == 0:
        if engine.phase == "decide":
            events += act(engine, "fold" if engine.current_seat == 1 else "enter")
        else:
            events += act(engine, engine.default_action())
    seat1 = [(e["choice"], e["forced"]) for e in of_kind(events, "decision") if e["seat"] == 1]
    # hands 0-2 fold (asked), hand 3 forced in, then the count starts again
    assert seat1[:6] == [
        ("fold", False), ("fold", False), ("fold", False), ("enter", True), ("fold", False), ("fold", False),
    ]


def test_trump_ace_first_lead():
    hands = {1: "AC 9C 7H 8S 9D"}
    engine, _ = table(hands, face_up="7C", entered={1, 2}, rules={"trump_ace_first_lead": True})
    assert engine.legal_actions() == ["AC"]
    with pytest.raises(IllegalActionError, match="must lead the trump ace AC"):
        engine.check_action("7H")
    plain, _ = table(hands, face_up="7C", entered={1, 2})
    assert plain.legal_actions() == ["7H", "8S", "9D", "AC"]


def test_trump_ace_rule_is_only_for_the_first_trick():
    hands = {1: "AH 7C 8C 9C AC", 2: "KH 7S 8S 9S TS"}
    engine, _ = table(hands, face_up="7D", entered={1, 2}, rules={"trump_ace_first_lead": True})
    # trump is diamonds; seat 1 holds no trump ace so any lead but the ace rule
    assert "8C" not in engine.legal_actions()
    act(engine, "AH", "KH")
    assert engine.current_seat == 1
    assert engine.legal_actions() == ["AC"]


@pytest.mark.parametrize("players, stock", [(4, 7), (3, 8), (2, 9)])
def test_fewer_players_remove_low_ranks(players, stock):
    engine, events = engine_with([], {"players": players}, seed=players)
    assert engine.n_seats == players
    deck = of_kind(events, "deal")[0]["deck"]
    assert len(deck) == 32 - 4 * (5 - players)
    assert sorted(deck) == sorted(all_cards(players))
    start = of_kind(events, "hand_start")[0]
    assert [len(h) for h in start["hands"]] == [5] * players
    assert engine.observation(0)["stock"] == stock
    while not engine.finished:
        act(engine, engine.default_action())
    result = engine.result()
    assert len(result["stars"]) == players and sum(result["stars"]) == players  # one round per player


def test_two_players_the_dealer_is_forced_when_the_other_enters():
    deck = deck_for_hands({}, face_up="AH", players=2)
    engine, _ = engine_with([deck], {"players": 2})
    events = act(engine, "enter")
    assert of_kind(events, "decision")[-1] == {"kind": "decision", "seat": 0, "choice": "enter", "forced": True}
