"""House bots: never foul, see only their own request, and the strong one
beats the random one."""

import random

import pytest

from arena.games import get_game
from arena.games.thirteen import ThirteenEngine
from arena.games.thirteen.arranger import N_SPLITS, best_arrangement, random_valid_arrangement
from arena.games.thirteen.cards import CARD_INDEX, DECK
from arena.games.thirteen.evaluator import Category, category_of
from arena.games.thirteen.wire import check_arrangement, seat_hands

SPEC = get_game("thirteen")


def test_the_spec_names_both_house_bots_and_the_strong_one_is_the_default():
    assert SPEC.name == "thirteen" and SPEC.n_seats == 4
    assert set(SPEC.house_bots) == {"random", "strong"}
    assert SPEC.default_house_bot == "strong"


def test_the_search_covers_all_72072_splits():
    assert N_SPLITS == 72_072


@pytest.mark.parametrize("wheel", ["lowest", "second_highest"])
def test_neither_arranger_ever_fouls(wheel):
    rng = random.Random(7)
    for _ in range(60):
        hand = tuple(rng.sample(DECK, 13))
        for split in (best_arrangement(hand, wheel), random_valid_arrangement(hand, rng, wheel)):
            assert sorted(split.front + split.middle + split.back) == sorted(hand)
            assert not seat_hands(split, wheel).fouled


def test_random_arranger_varies_its_answer():
    rng = random.Random(1)
    hand = tuple(rng.sample(DECK, 13))
    assert len({random_valid_arrangement(hand, rng) for _ in range(20)}) > 10


def test_strong_finds_the_obvious_split():
    # TH-AH (a royal flush), AS AD AC, 2H 2S 2D, 5H 6H: the flush behind,
    # a full house (worth its middle bonus) before it.
    hand = [DECK[i] for i in (8, 9, 10, 11, 12, 25, 38, 51, 0, 13, 26, 3, 4)]
    split = best_arrangement(hand)
    assert split.back == (8, 9, 10, 11, 12)
    assert category_of(seat_hands(split, "lowest").middle) == Category.FULL_HOUSE


def test_strong_beats_three_random_arrangers():
    e = ThirteenEngine({"deals": 30}, random.Random(2))
    e.start()
    bots = [SPEC.house_bots["strong"](random.Random(0))] + [
        SPEC.house_bots["random"](random.Random(s)) for s in (1, 2, 3)
    ]
    while not e.finished:
        for s in e.to_act:
            e.play_for(s, bots[s]("arrange", e.request_for(s)["constraints"], e.observation(s)))
    totals = e.result()["totals"]
    assert totals[0] > 0 and totals[0] == max(totals)


# Two straights, one of them A-2-3-4-5: which may go behind depends on the flag.
TWO_STRAIGHTS = "AH 2S 3D 4C 5H 9S TD JC QH KS 7C 7D 2C"


@pytest.mark.parametrize("name", ["random", "strong"])
@pytest.mark.parametrize("wheel", ["lowest", "second_highest"])
def test_house_bots_made_without_rules_never_foul_under_either_wheel(name, wheel):
    bot = SPEC.house_bots[name](random.Random(3))
    for k in range(10):
        e = ThirteenEngine({"deals": 1, "players": 2, "wheel": wheel, "foul_policy": "reject"}, random.Random(k))
        e.start()
        cards = TWO_STRAIGHTS.split() if k == 0 else e.observation(0)["cards"]
        hand = tuple(CARD_INDEX[c] for c in cards)
        action = bot("arrange", {"front": 3, "middle": 5, "back": 5}, {"cards": cards})
        check_arrangement(action, hand, wheel, reject_fouls=True)


@pytest.mark.parametrize("wheel", ["lowest", "second_highest"])
def test_house_bots_given_the_rules_follow_the_wheel_flag(wheel):
    bot = SPEC.house_bots["strong"](random.Random(3), {"wheel": wheel})
    cards = TWO_STRAIGHTS.split()
    action = bot("arrange", {}, {"cards": cards})
    check_arrangement(action, tuple(CARD_INDEX[c] for c in cards), wheel, reject_fouls=True)
