"""Rules §5–§6: the exchange while the stock lasts, and the dealer's take."""

import pytest

from arena.games.base import IllegalActionError

from .helpers import act, all_cards, deck_for_hands, engine_with


def everyone_enters():
    engine, _ = engine_with([all_cards()])
    act(engine, "enter", "enter", "enter", "enter", "enter")
    return engine


def test_exchange_legal_sets_are_ordered_by_size_then_card_by_card():
    engine = everyone_enters()
    assert engine.current_seat == 1
    hand = engine.observation(1)["cards"]
    legal = engine.legal_actions()
    assert len(legal) == 32 and legal[0] == [] and legal[-1] == hand
    assert legal[1:6] == [[c] for c in hand]
    assert legal[6] == hand[:2] and legal[7] == [hand[0], hand[2]]
    sizes = [len(s) for s in legal]
    assert sizes == sorted(sizes)


def test_exchange_is_compared_as_a_set_and_returned_canonical():
    engine = everyone_enters()
    hand = engine.observation(1)["cards"]
    assert engine.check_action([hand[3], hand[0]]).action == [hand[0], hand[3]]
    events = act(engine, [hand[3], hand[0]])
    assert events[0].for_record()["discarded"] == [hand[0], hand[3]]


def test_others_learn_only_the_count():
    engine = everyone_enters()
    hand = engine.observation(1)["cards"]
    ev = act(engine, hand[:2])[0]
    assert ev.for_seat(1) == {"kind": "exchange", "seat": 1, "count": 2, "drawn": all_cards()[26:28]}
    for s in (0, 2, 3, 4):
        assert ev.for_seat(s) == {"kind": "exchange", "seat": 1, "count": 2}
    assert ev.for_public() == {"kind": "exchange", "seat": 1, "count": 2}
    assert engine.observation(2)["exchanges"] == [None, 2, None, None, None]
    assert engine.observation(2)["stock"] == 4


def test_exchange_is_limited_by_the_stock_and_an_empty_stock_ends_the_round_of_exchanges():
    engine = everyone_enters()
    act(engine, engine.observation(1)["cards"])  # seat 1 swaps all five: one card left
    assert engine.current_seat == 2 and engine.observation(2)["max_discard"] == 1
    legal = engine.legal_actions()
    assert max(len(s) for s in legal) == 1 and len(legal) == 6
    two = engine.observation(2)["cards"][:2]
    with pytest.raises(IllegalActionError, match="at most 1 cards: only 1 left in the stock"):
        engine.check_action(two)
    act(engine, two[:1])  # the stock is now empty
    # Seats 3, 4 and the dealer are not asked: the take comes next.
    assert engine.phase == "take" and engine.current_seat == 0


def test_seat_is_asked_while_any_stock_is_left():
    engine = everyone_enters()
    act(engine, engine.observation(1)["cards"][:4])  # two left
    assert engine.current_seat == 2
    act(engine, [])
    assert engine.current_seat == 3 and engine.observation(3)["max_discard"] == 2


def test_exchange_refusals_name_the_problem():
    engine = everyone_enters()
    hand = engine.observation(1)["cards"]
    with pytest.raises(IllegalActionError, match="not a card in your hand: AC"):
        engine.check_action(["AC"])
    with pytest.raises(IllegalActionError, match="malformed card 'XX'"):
        engine.check_action(["XX"])
    with pytest.raises(IllegalActionError, match="listed twice"):
        engine.check_action([hand[0], hand[0]])
    with pytest.raises(IllegalActionError, match="list of the cards"):
        engine.check_action(hand[0])


def take_table(dealer_enters: bool):
    deck = deck_for_hands({0: "7S 8S 9S TS JS", 1: "AH KH QH JH TH"}, face_up="AD")
    engine, _ = engine_with([deck])
    act(engine, "enter", "enter", "fold", "fold")
    act(engine, "enter" if dealer_enters else "fold")
    act(engine, [], [])
    if dealer_enters:
        act(engine, [])
    return engine


def test_entered_dealer_is_offered_the_take_and_everyone_learns_it():
    engine = take_table(dealer_enters=True)
    assert engine.phase == "take" and engine.current_seat == 0
    assert engine.legal_actions() == [None, "7S", "8S", "9S", "TS", "JS"]
    events = act(engine, "8S")
    take = events[0]
    assert take.for_seat(3) == {"kind": "take", "seat": 0, "taken": True}
    assert take.for_public() == {"kind": "take", "seat": 0, "taken": True}
    assert take.for_record() == {"kind": "take", "seat": 0, "taken": True, "discarded": "8S"}
    obs = engine.observation(0)
    assert obs["cards"] == ["7S", "9S", "TS", "JS", "AD"]
    assert obs["trump"] == "D" and obs["face_up"] == "AD" and obs["face_up_taken"] is True
    assert engine.observation(2)["face_up_taken"] is True and "8S" not in str(engine.observation(2))


def test_dealer_may_decline_the_take():
    engine = take_table(dealer_enters=True)
    events = act(engine, None)
    assert events[0].for_record() == {"kind": "take", "seat": 0, "taken": False, "discarded": None}
    assert engine.observation(0)["face_up_taken"] is False and engine.phase == "play"


def test_no_take_when_the_dealer_folded():
    engine = take_table(dealer_enters=False)
    assert engine.phase == "play" and engine.current_seat == 1


def test_take_refuses_a_card_not_held():
    engine = take_table(dealer_enters=True)
    with pytest.raises(IllegalActionError, match="not a card in your hand: AD"):
        engine.check_action("AD")
    with pytest.raises(IllegalActionError, match="null"):
        engine.check_action(["7S"])
