"""Rules §7: leading, following, trumping, the trick's winner."""

import pytest

from arena.games.base import IllegalActionError

from .helpers import act, of_kind, table


def test_leader_holding_an_ace_leads_that_suit_only_with_the_ace():
    engine, _ = table({1: "AS KS 7H 8H 9D"}, face_up="7C", entered={1, 2})
    assert engine.current_seat == 1 and engine.phase == "play"
    assert engine.legal_actions() == ["7H", "8H", "AS", "9D"]
    with pytest.raises(IllegalActionError, match="must lead the ace: you hold AS, so spades may only be led with AS"):
        engine.check_action("KS")


def test_ace_rule_holds_for_the_trump_suit_too():
    engine, _ = table({1: "AH 8H 9S TS JD"}, face_up="TH", entered={1, 2})
    assert "8H" not in engine.legal_actions() and "AH" in engine.legal_actions()
    with pytest.raises(IllegalActionError, match="hearts may only be led with AH"):
        engine.check_action("8H")


def test_follower_must_follow_and_beat_when_able():
    engine, _ = table({1: "9H 7S 8S 9S TS", 2: "8H KH AH 7D 8D"}, face_up="7C", entered={1, 2})
    act(engine, "9H")
    assert engine.legal_actions() == ["KH", "AH"]
    with pytest.raises(IllegalActionError, match="must follow hearts and beat 9H: play one of KH, AH"):
        engine.check_action("8H")
    with pytest.raises(IllegalActionError, match="must follow hearts"):
        engine.check_action("7D")


def test_follower_unable_to_beat_plays_any_card_of_the_suit():
    engine, _ = table({1: "KH 7S 8S 9S TS", 2: "8H QH 7D 8D 9D"}, face_up="7C", entered={1, 2})
    act(engine, "KH")
    assert engine.legal_actions() == ["8H", "QH"]


def test_duty_to_beat_lapses_once_a_non_trump_lead_is_trumped():
    hands = {1: "9H 7S 8S 9S TS", 2: "8C 7D 8D 9D TD", 3: "7H TH KH JS QS"}
    engine, _ = table(hands, face_up="7C", entered={1, 2, 3})
    act(engine, "9H", "8C")
    assert engine.legal_actions() == ["7H", "TH", "KH"]


def test_duty_to_beat_stands_when_trump_is_led():
    hands = {1: "9C 7S 8S 9S TS", 2: "8C JC 7D 8D 9D"}
    engine, _ = table(hands, face_up="7C", entered={1, 2})
    act(engine, "9C")
    assert engine.legal_actions() == ["JC"]
    with pytest.raises(IllegalActionError, match="must follow clubs and beat 9C: play one of JC"):
        engine.check_action("8C")


def test_void_in_the_led_suit_must_trump():
    engine, _ = table({1: "9H 7S 8S 9S TS", 2: "8C 7D 8D 9D TD"}, face_up="7C", entered={1, 2})
    act(engine, "9H")
    assert engine.legal_actions() == ["8C"]
    with pytest.raises(IllegalActionError, match="no hearts in hand, so you must trump: play one of 8C"):
        engine.check_action("7D")


def test_must_over_trump_when_able():
    hands = {1: "9H 7S 8S 9S TS", 2: "JC 7D 8D 9D TD", 3: "8C QC JS QS KS"}
    engine, _ = table(hands, face_up="7C", entered={1, 2, 3})
    act(engine, "9H", "JC")
    assert engine.legal_actions() == ["QC"]
    with pytest.raises(IllegalActionError, match="must over-trump JC: play one of QC"):
        engine.check_action("8C")


def test_unable_to_over_trump_still_plays_any_trump():
    hands = {1: "9H 7S 8S 9S TS", 2: "JC 7D 8D 9D TD", 3: "8C 9C JS QS KS"}
    engine, _ = table(hands, face_up="7C", entered={1, 2, 3})
    act(engine, "9H", "JC")
    assert engine.legal_actions() == ["8C", "9C"]
    with pytest.raises(IllegalActionError, match="must trump"):
        engine.check_action("JS")


def test_holding_neither_suit_nor_trump_any_card_goes():
    engine, _ = table({1: "9H 7S 8S 9S TS", 2: "7D 8D 9D TD AS"}, face_up="7C", entered={1, 2})
    act(engine, "9H")
    assert engine.legal_actions() == ["AS", "7D", "8D", "9D", "TD"]


def test_highest_trump_wins_and_scores_drop_at_once():
    hands = {1: "9H 7S 8S 9S TS", 2: "JC 7D 8D 9D TD", 3: "8C 9C JS QS KS"}
    engine, _ = table(hands, face_up="7C", entered={1, 2, 3})
    events = act(engine, "9H", "JC", "9C")
    assert of_kind(events, "trick") == [
        {"kind": "trick", "winner": 2, "cards": [[1, "9H"], [2, "JC"], [3, "9C"]], "scores": [15, 15, 14, 15, 15]}
    ]
    assert engine.current_seat == 2  # the winner leads next
    obs = engine.observation(1)
    assert obs["tricks"] == [0, 0, 1, 0, 0] and obs["trick"] == [] and obs["leader"] == 2
    assert obs["played"] == [{"leader": 1, "cards": [[1, "9H"], [2, "JC"], [3, "9C"]], "winner": 2}]


def test_without_trump_the_highest_card_of_the_led_suit_wins():
    hands = {1: "9H 7S 8S 9S TS", 2: "AD 7D 8D 9D TD", 3: "TH QH JS QS KS"}
    engine, _ = table(hands, face_up="7C", entered={1, 2, 3})
    events = act(engine, "9H", "AD", "QH")  # the ace of diamonds does not win a heart trick
    assert of_kind(events, "trick")[0]["winner"] == 3


def test_play_refusals_name_the_card():
    engine, _ = table({1: "9H 7S 8S 9S TS"}, face_up="7C", entered={1, 2})
    with pytest.raises(IllegalActionError, match="not a card in your hand: QD"):
        engine.check_action("QD")
    with pytest.raises(IllegalActionError, match="malformed card 'XX'"):
        engine.check_action("XX")
    with pytest.raises(IllegalActionError, match="malformed card None"):
        engine.check_action(None)
    assert engine.default_action() == "9H"
