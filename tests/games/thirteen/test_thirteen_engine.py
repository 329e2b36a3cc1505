"""The engine: deals, the seat-addressed API (INTERFACES §A), errors a bot
author can act on, fouls under both policies, showdown, result, replay."""

import random
import time

import pytest

from arena.games import get_game
from arena.games.base import DealInfo, IllegalActionError, NotYourTurnError, RuleConfigError
from arena.games.thirteen import ThirteenEngine, replay_record
from arena.games.thirteen.cards import CARD_STR
from arena.games.thirteen.wire import check_arrangement

from .helpers import arrangement, cards, deck_for_hands

HANDS = {
    0: "AS AH 2D KS KH KD 3C 3H 9C 9D 9H 9S 4D",
    1: "2S 3D 5D 4S 4H 6D 7C 8H TS TH JD QD 8S",
    2: "KC QC 2C 5S 5H 6S 6H 7D JS JH JC 2H 3S",
}
STRONG = arrangement("AS AH 2D", "KS KH KD 3C 3H", "9C 9D 9H 9S 4D")
WEAK = arrangement("2S 3D 5D", "4S 4H 6D 7C 8H", "TS TH JD QD 8S")
MIDDLING = arrangement("KC QC 2C", "5S 5H 6S 6H 7D", "JS JH JC 2H 3S")
FOULED_WEAK = arrangement("TS TH 5D", "4S 4H 6D 7C 8H", "2S 3D JD QD 8S")  # pair T in front of pair 4


def engine(rules=None, hands=HANDS, deals=1):
    deck = deck_for_hands(hands)
    e = ThirteenEngine({"deals": deals, **(rules or {})}, None, [deck] * deals)
    e.start()
    return e


def test_the_deal_is_always_four_hands_card_i_to_hand_i_mod_4():
    deck = list(CARD_STR)
    e = ThirteenEngine({"players": 2, "deals": 1}, None, [deck])
    events = e.start()
    assert [ev.kind for ev in events] == ["deal", "deal_start"]
    assert e.observation(0)["cards"] == [CARD_STR[i] for i in range(0, 52, 4)]
    assert e.observation(1)["cards"] == [CARD_STR[i] for i in range(1, 52, 4)]
    assert len(events[1].for_record()["hands"]) == 2  # hands 2 and 3 stay unused


def test_the_deal_event_commits_the_whole_deck_and_no_seat_sees_it():
    e = ThirteenEngine({"deals": 1}, random.Random(3))
    deal = e.start()[0]
    assert deal.for_seat(0) is None and deal.for_public() is None
    info = e.deals()[0]
    assert isinstance(info, DealInfo) and len(info.deck) == 52 and sorted(info.deck) == sorted(CARD_STR)
    if hasattr(info, "label"):
        assert info.label == {"deal": 0}


def test_one_shuffle_per_deal_whatever_is_played():
    a = ThirteenEngine({"deals": 3}, random.Random(9))
    b = ThirteenEngine({"deals": 3}, random.Random(9))
    for e, bot in ((a, "strong"), (b, "random")):
        e.start()
        play = get_game("thirteen").house_bots[bot](random.Random(1))
        while not e.finished:
            for s in e.to_act:
                e.play_for(s, play("arrange", e.request_for(s)["constraints"], e.observation(s)))
    assert [d.deck for d in a.deals()] == [d.deck for d in b.deals()]


def test_every_seat_is_asked_at_once_to_arrange():
    e = engine()
    assert e.to_act == (0, 1, 2, 3)
    assert e.phase_for(2) == "arrange"
    assert e.request_for(2) == {"constraints": {"front": 3, "middle": 5, "back": 5}}
    assert e.current_seat == 0 and e.phase == "arrange"


def test_play_for_announces_who_arranged_without_cards_until_the_last_seat():
    e = engine({"players": 3})
    ev = e.play_for(1, WEAK)
    assert [x.kind for x in ev] == ["arranged"]
    assert ev[0].for_seat(0) == {"kind": "arranged", "deal": 0, "seat": 1}
    assert ev[0].for_public() == {"kind": "arranged", "deal": 0, "seat": 1}
    assert ev[0].for_record()["middle"] == ["4H", "8H", "4S", "6D", "7C"]
    assert e.to_act == (0, 2)
    assert e.play_for(2, MIDDLING)[0].kind == "arranged"
    ev = e.play_for(0, STRONG)
    assert [x.kind for x in ev] == ["arranged", "showdown"]
    assert e.finished and e.to_act == () and e.current_seat is None


def test_showdown_is_exactly_the_protocol_event():
    e = engine({"players": 3})
    e.play_for(0, STRONG)
    e.play_for(1, WEAK)
    show = e.play_for(2, MIDDLING)[-1].for_seat(1)
    assert show == {
        "kind": "showdown",
        "deal": 0,
        "arrangements": [
            {"front": ["AH", "AS", "2D"], "middle": ["3H", "KH", "KS", "KD", "3C"], "back": ["9H", "9S", "4D", "9D", "9C"]},
            {"front": ["2S", "3D", "5D"], "middle": ["4H", "8H", "4S", "6D", "7C"], "back": ["TH", "8S", "TS", "JD", "QD"]},
            {"front": ["2C", "QC", "KC"], "middle": ["5H", "6H", "5S", "6S", "7D"], "back": ["2H", "JH", "3S", "JS", "JC"]},
        ],
        "fouled": [False, False, False],
        "pairs": [[0, 20, 20], [-20, 0, -6], [-20, 6, 0]],
        "scores": [40, -26, -14],
        "totals": [40, -26, -14],
    }


def test_next_deal_starts_only_after_the_showdown_and_totals_add_up():
    e = engine({"players": 3}, deals=2)
    for s, a in ((0, STRONG), (1, WEAK)):
        e.play_for(s, a)
    ev = e.play_for(2, MIDDLING)
    assert [x.kind for x in ev] == ["arranged", "showdown", "deal", "deal_start"]
    assert e.observation(0)["deal"] == 1 and e.to_act == (0, 1, 2)
    for s, a in ((0, STRONG), (1, WEAK), (2, MIDDLING)):
        e.play_for(s, a)
    assert e.result() == {"totals": [80, -52, -28], "deal_scores": [[40, -26, -14]] * 2, "ranks": [1, 3, 2]}


@pytest.mark.parametrize(
    "action, reason",
    [
        ("AS", "an arrangement is an object"),
        ({"front": ["AS", "AH"], "middle": [], "back": []}, "front must hold 3 cards, not 2"),
        ({**STRONG, "back": STRONG["back"] + ["QD"]}, "back must hold 5 cards, not 6"),
        ({"front": ["AS", "AH"], "middle": STRONG["middle"]}, "front must hold 3 cards"),
        ({"middle": STRONG["middle"], "back": STRONG["back"]}, "the arrangement has no front"),
        ({**STRONG, "extra": []}, "unknown key(s) extra"),
        ({**STRONG, "front": ["AS", "AH", "QD"]}, "not a card in your hand: QD in the front"),
        ({**STRONG, "front": ["AS", "AH", "AH"]}, "card listed twice in the arrangement: AH"),
        ({**STRONG, "front": ["AS", "AH", "1X"]}, "malformed card '1X'"),
        ({**STRONG, "middle": "KS KH KD 3C 3H"}, "middle must be a list of 5 cards"),
    ],
)
def test_malformed_arrangements_are_refused_with_what_is_wrong(action, reason):
    e = engine()
    with pytest.raises(IllegalActionError, match=__import__("re").escape(reason)):
        e.check_for(0, action)
    with pytest.raises(IllegalActionError):
        e.play_for(0, action)
    assert e.to_act == (0, 1, 2, 3)  # the request stays open


def test_check_for_returns_the_canonical_form_with_rows_as_sets():
    e = engine()
    shuffled = {"back": ["4D", "9S", "9H", "9D", "9C"], "front": ["2D", "AS", "AH"], "middle": STRONG["middle"]}
    assert e.check_for(0, shuffled).action == {
        "front": ["AH", "AS", "2D"],
        "middle": ["3H", "KH", "KS", "KD", "3C"],
        "back": ["9H", "9S", "4D", "9D", "9C"],
    }


def test_under_penalize_a_fouled_arrangement_is_accepted_and_scored_as_fouled():
    e = engine({"players": 2})
    e.play_for(1, FOULED_WEAK)
    show = e.play_for(0, STRONG)[-1].for_record()
    assert show["fouled"] == [False, True]
    assert show["pairs"] == [[0, 10], [-10, 0]]


def test_under_reject_a_fouled_arrangement_is_refused_and_may_be_resubmitted():
    e = engine({"players": 2, "foul_policy": "reject"})
    with pytest.raises(IllegalActionError, match=r"fouled: the front \(pair \(T\)\) is stronger than the middle"):
        e.play_for(1, FOULED_WEAK)
    assert e.to_act == (0, 1)
    assert e.play_for(1, WEAK)[0].kind == "arranged"


def test_the_first_valid_answer_is_final():
    e = engine()
    e.play_for(0, STRONG)
    with pytest.raises(NotYourTurnError, match="seat 0 has already arranged"):
        e.play_for(0, STRONG)
    with pytest.raises(NotYourTurnError):
        e.default_for(0)
    assert e.to_act == (1, 2, 3)


def test_default_is_the_house_strategys_unfouled_arrangement_in_good_time():
    e = ThirteenEngine({"deals": 20}, random.Random(4))
    e.start()
    while not e.finished:
        for s in e.to_act:
            hand = set(e.observation(s)["cards"])
            start = time.perf_counter()
            action = e.default_for(s)
            assert time.perf_counter() - start < 1.0
            assert set(action["front"] + action["middle"] + action["back"]) == hand
            split = check_arrangement(action, tuple(cards(" ".join(hand))), "lowest", reject_fouls=True)
            assert split is not None
            e.play_for(s, action)


def test_sequential_stand_ins_play_a_whole_match():
    e = ThirteenEngine({"deals": 2}, random.Random(5))
    e.start()
    steps = 0
    while not e.finished:
        assert e.legal_actions() == []
        e.check_action(e.default_action())
        e.play(e.default_action())
        steps += 1
    assert steps == 8 and e.current_seat is None and e.phase is None
    with pytest.raises(NotYourTurnError):
        e.play(STRONG)


def test_observation_is_the_request_state():
    e = engine({"players": 3})
    e.play_for(1, WEAK)
    obs = e.observation(0)
    assert obs == {
        "deal": 0,
        "deals": 1,
        "seat": 0,
        "cards": ["3H", "9H", "KH", "AH", "9S", "KS", "AS", "2D", "4D", "9D", "KD", "3C", "9C"],
        "totals": [0, 0, 0],
        "arranged": [False, True, False],
    }


def test_match_start_rules_carry_every_flag_with_its_exact_value():
    assert ThirteenEngine().rules == {
        "deals": 10,
        "players": 4,
        "wheel": "lowest",
        "foul_policy": "penalize",
        "shoot": "plus3",
        "mid_full_house_bonus": 2,
    }
    rules = {"deals": 3, "players": 2, "wheel": "second_highest", "foul_policy": "reject", "shoot": "double",
             "mid_full_house_bonus": 1}
    assert ThirteenEngine(rules).rules == rules


@pytest.mark.parametrize(
    "rules, reason",
    [
        ({"wheel": "highest"}, "wheel must be 'lowest' or 'second_highest'"),
        ({"mid_full_house_bonus": 3}, "mid_full_house_bonus must be 2 or 1"),
        ({"mid_full_house_bonus": True}, "mid_full_house_bonus must be 2 or 1"),
        ({"players": 5}, "players must be an integer from 2 to 4"),
        ({"deals": 0}, "deals must be an integer from 1"),
        ({"jokers": 2}, "unknown thirteen rule option(s) jokers"),
    ],
)
def test_bad_rules_are_refused(rules, reason):
    with pytest.raises(RuleConfigError, match=__import__("re").escape(reason)):
        ThirteenEngine(rules)


def test_wheel_flag_reaches_the_foul_check():
    hands = {0: "AH 2S 3D 4C 5H KS KH 9D 9S 7C 8C TC JD"}
    wheel_back = arrangement("KS KH 9D", "9S 7C 8C TC JD", "AH 2S 3D 4C 5H")  # J-high straight in the middle
    wheel_middle = arrangement("KS KH 9D", "AH 2S 3D 4C 5H", "9S 7C 8C TC JD")

    def check(wheel, action):
        return engine({"players": 2, "foul_policy": "reject", "wheel": wheel}, hands).check_for(0, action)

    check("lowest", wheel_middle)
    check("second_highest", wheel_back)
    with pytest.raises(IllegalActionError, match="fouled: the middle"):
        check("lowest", wheel_back)
    with pytest.raises(IllegalActionError, match="fouled: the middle"):
        check("second_highest", wheel_middle)


def test_a_recorded_match_replays_to_the_same_events_and_result():
    spec = get_game("thirteen")
    e = spec.new_match({"deals": 3, "players": 3}, random.Random(8), None)
    log = [x.for_record() for x in e.start()]
    bots = [spec.house_bots[n](random.Random(i)) for i, n in enumerate(("strong", "random", "random"))]
    while not e.finished:
        for s in reversed(e.to_act):
            log += [x.for_record() for x in e.play_for(s, bots[s]("arrange", {}, e.observation(s)))]
    again = replay_record(e.rules, log)
    assert again.result() == e.result()
    assert [d.deck for d in again.deals()] == [d.deck for d in e.deals()]
