"""Rules §2–§3: the deal, the dealers, and who sees which cards."""

import random

from arena.games.muushig import MuushigEngine

from .helpers import act, all_cards, engine_with, of_kind


def test_card_i_goes_to_seat_left_of_dealer_plus_i():
    deck = all_cards()  # canonical order: 7H 8H ... AC
    engine, events = engine_with([deck])
    start = of_kind(events, "hand_start")[0]
    assert start["dealer"] == 0
    for i in range(25):
        seat = (0 + 1 + i) % 5
        assert deck[i] in start["hands"][seat]
    assert start["face_up"] == deck[25] == "8C"
    assert start["trump"] == "C"


def test_stock_is_drawn_from_deck_26_upward():
    deck = all_cards()
    engine, _ = engine_with([deck])
    events = act(engine, "enter", "enter", "fold", "fold", "fold")  # seats 1, 2 in; dealer 0 folds
    assert engine.phase == "exchange" and engine.current_seat == 1
    hand = engine.observation(1)["cards"]
    events = act(engine, hand[:2])
    assert of_kind(events, "exchange")[0]["drawn"] == deck[26:28]
    hand2 = engine.observation(2)["cards"]
    events = act(engine, hand2[:3])
    assert of_kind(events, "exchange")[0]["drawn"] == deck[28:31]


def test_each_seat_sees_only_its_own_cards_and_no_one_sees_the_deck():
    engine, events = engine_with([all_cards()])
    deal = next(e for e in events if e.kind == "deal")
    assert [deal.for_seat(s) for s in range(5)] == [None] * 5
    assert deal.for_public() is None
    assert deal.for_record()["deck"] == all_cards()
    assert list(deal.deal.deck) == all_cards() and (deal.deal.round, deal.deal.hand) == (0, 0)
    start = next(e for e in events if e.kind == "hand_start")
    hands = start.for_record()["hands"]
    for s in range(5):
        wire = start.for_seat(s)
        assert wire["cards"] == hands[s] and "hands" not in wire
    assert "cards" not in start.for_public() and "hands" not in start.for_public()
    assert kinds_before_hand_start(events) == ["round_start", "deal"]


def kinds_before_hand_start(events):
    out = []
    for e in events:
        if e.kind == "hand_start":
            return out
        out.append(e.kind)
    raise AssertionError("no hand_start")


def test_public_events_are_one_dict_for_every_seat():
    engine, events = engine_with([all_cards()])
    round_start = events[0]
    assert all(round_start.for_seat(s) is round_start.for_seat(0) for s in range(5))
    decision = act(engine, "enter")[0]
    assert decision.for_seat(3) is decision.for_seat(4) is decision.for_public()


def test_first_dealer_of_round_r_is_seat_r_and_the_deal_passes_left():
    engine, events = engine_with([], {"max_hands": 3}, seed=5)
    while not engine.finished:
        events += engine.play(engine.default_action())
    assert [e["dealer"] for e in of_kind(events, "round_start")] == [0, 1, 2, 3, 4]
    dealers = [(e["round"], e["hand"], e["dealer"]) for e in of_kind(events, "hand_start")]
    assert dealers == [(r, h, (r + h) % 5) for r in range(5) for h in range(3)]


def test_same_seed_same_decks_whatever_the_players_do():
    a = MuushigEngine(None, random.Random(42))
    b = MuushigEngine(None, random.Random(42))
    a.start()
    b.start()
    a.play("fold")
    b.play("enter")
    while not a.finished and len(a.deals()) < 4:
        a.play(a.default_action())
    while not b.finished and len(b.deals()) < 4:
        b.play(b.legal_actions()[-1])
    assert a.deals()[:4] == b.deals()[:4]
    fresh = all_cards()
    random.Random(42).shuffle(fresh)  # exactly one shuffle of a fresh canonical deck per deal
    assert list(a.deals()[0].deck) == fresh
