"""Rules §2: hand ranking of 5-card and 3-card hands, kickers, ties, the
wheel flag, and the common scale of fronts and 5-card hands."""

from collections import Counter
from itertools import combinations, combinations_with_replacement

import pytest

from arena.games.thirteen.evaluator import (
    CARD_KEY,
    RANK_KEYS,
    Category,
    all_three_card_counts,
    category_of,
    describe,
    eval3,
    five_card_evaluator,
)

from .helpers import cards, value

EXAMPLES = {
    Category.STRAIGHT_FLUSH: "9H TH JH QH KH",
    Category.FOUR_OF_A_KIND: "7S 7H 7D 7C 2H",
    Category.FULL_HOUSE: "QS QH QD 4C 4H",
    Category.FLUSH: "2D 5D 9D JD KD",
    Category.STRAIGHT: "5S 6H 7D 8C 9H",
    Category.THREE_OF_A_KIND: "8S 8H 8D KC 2H",
    Category.TWO_PAIR: "JS JH 4D 4C AH",
    Category.PAIR: "TS TH 3D 7C KH",
    Category.HIGH_CARD: "2S 5H 9D JC KH",
}


@pytest.mark.parametrize("category", list(Category))
def test_each_five_card_category_is_recognised(category):
    assert category_of(value(EXAMPLES[category])) == category


def test_categories_rank_from_straight_flush_down_to_high_card():
    ordered = sorted(Category, reverse=True)
    values = [value(EXAMPLES[c]) for c in ordered]
    assert values == sorted(values, reverse=True)


def test_ranks_decide_within_a_category_ace_high():
    assert value("AS AH 3D 4C 5H") > value("KS KH QD JC 9H")
    assert value("2S 4H 6D 8C AH") > value("3S 5H 7D 9C KH")


def test_kickers_decide_in_descending_order():
    assert value("TS TH AD 3C 2H") > value("TD TC KD QC JH")
    assert value("TS TH AD 4C 2H") > value("TD TC AH 3C 2S")
    assert value("JS JH 4D 4C AH") > value("JD JC 4S 4H KH")
    assert value("JS JH 5D 5C 2H") > value("JD JC 4S 4H AH")
    assert value("AS KH 9D 7C 3H") > value("AD KC 9S 7H 2H")


def test_full_house_is_decided_by_the_trips_first():
    assert value("3S 3H 3D 2C 2H") > value("2S 2D 2C AH AD")
    assert value("4S 4H 4D 2C 2H") > value("3S 3H 3D AC AH")


def test_flushes_compare_card_by_card():
    assert value("AD 9D 7D 5D 3D") > value("KH QH JH 9H 7H")
    assert value("AD 9D 7D 5D 3D") > value("AH 9H 7H 5H 2H")


def test_equal_ranks_tie_whatever_the_suits():
    assert value("AS KH 9D 7C 3H") == value("AD KC 9S 7H 3S")
    assert value("9H TH JH QH KH") == value("9S TS JS QS KS")
    assert value("AS AH 7D") == value("AD AC 7H")


def test_no_wrap_around_straights():
    assert category_of(value("QS KH AD 2C 3H")) == Category.HIGH_CARD


def test_wheel_lowest_is_below_six_high():
    low = value("AS 2H 3D 4C 5H", "lowest")
    assert category_of(low) == Category.STRAIGHT
    assert low < value("2S 3H 4D 5C 6H", "lowest")
    assert low > value("AS AH AD KC QH", "lowest")  # still a straight


def test_wheel_second_highest_sits_between_king_and_ace_high():
    wheel = value("AS 2H 3D 4C 5H", "second_highest")
    assert value("9S TH JD QC KH", "second_highest") < wheel < value("TS JH QD KC AH", "second_highest")
    assert wheel > value("2S 3H 4D 5C 6H", "second_highest")


def test_wheel_flag_applies_to_the_straight_flush_too():
    for wheel in ("lowest", "second_highest"):
        assert category_of(value("AH 2H 3H 4H 5H", wheel)) == Category.STRAIGHT_FLUSH
    assert value("AH 2H 3H 4H 5H", "lowest") < value("2S 3S 4S 5S 6S", "lowest")
    assert value("9S TS JS QS KS", "second_highest") < value("AH 2H 3H 4H 5H", "second_highest")
    assert value("AH 2H 3H 4H 5H", "second_highest") < value("TS JS QS KS AS", "second_highest")


def test_three_card_front_counts_only_trips_pair_and_high_card():
    assert category_of(value("5S 5H 5D")) == Category.THREE_OF_A_KIND
    assert category_of(value("KS KH 2D")) == Category.PAIR
    assert category_of(value("QH KH AH")) == Category.HIGH_CARD  # no flush or straight in three
    assert value("2S 2H 2D") > value("AS AH KD") > value("AS KH QD")
    assert value("KS KH 3D") > value("KD KC 2H")


def test_front_and_five_card_hands_share_one_scale():
    assert value("KS KH 9D") > value("QS QH AD 5C 3H")  # pair of K over pair of Q
    assert value("KS KH 9D") < value("KD KC 9S 3C 2H")  # front matched, kickers left
    assert value("KS KH TD") > value("KD KC 9S 8C 7H")  # front's kicker higher
    assert value("AS KH QD") < value("AD KC QS 3C 2H")
    assert value("AS KH QD") > value("AD KC JS TC 9H")
    assert value("8S 8H 8D") > value("AS AH KD KC QH")  # trips beat two pair


def test_describe_names_hands_for_error_messages():
    assert describe(value("KS KH 9D")) == "pair (K)"
    assert describe(value("AH 2H 3H 4H 5H")) == "straight flush, 5 high"
    assert describe(value("AH 2H 3H 4H 5S", "second_highest")) == "straight, 5 high"
    assert describe(value("QS QH QD 4C 4H")) == "full house (Q over 4)"


def test_rank_keys_give_distinct_sums_for_every_five_and_three_card_rank_multiset():
    for size in (3, 5):
        sums = Counter()
        for ranks in combinations_with_replacement(range(13), size):
            if max(Counter(ranks).values()) <= 4:
                sums[sum(RANK_KEYS[r] for r in ranks)] += 1
        assert max(sums.values()) == 1


@pytest.fixture(scope="module")
def every_five_card_hand():
    """wheel -> Counter of strengths over all 2,598,960 five-card hands (one pass each)."""
    out = {}
    for wheel in ("lowest", "second_highest"):
        eval5 = five_card_evaluator(wheel)
        out[wheel] = Counter(eval5(hand) for hand in combinations(CARD_KEY, 5))
    return out


def by_category(strengths):
    counts = Counter()
    for v, n in strengths.items():
        counts[category_of(v)] += n
    return dict(counts)


def test_exhaustive_five_card_counts(every_five_card_hand):
    """All 2,598,960 five-card hands, by category (the textbook counts)."""
    expected = {
        Category.STRAIGHT_FLUSH: 40,
        Category.FOUR_OF_A_KIND: 624,
        Category.FULL_HOUSE: 3744,
        Category.FLUSH: 5108,
        Category.STRAIGHT: 10200,
        Category.THREE_OF_A_KIND: 54912,
        Category.TWO_PAIR: 123552,
        Category.PAIR: 1098240,
        Category.HIGH_CARD: 1302540,
    }
    for wheel in ("lowest", "second_highest"):
        assert by_category(every_five_card_hand[wheel]) == expected
        assert sum(every_five_card_hand[wheel].values()) == 2_598_960


def test_exhaustive_five_card_distinct_strengths(every_five_card_hand):
    """7,462 distinct classes of 5-card hands; the wheel flag moves, never merges them."""
    for wheel in ("lowest", "second_highest"):
        assert len(every_five_card_hand[wheel]) == 7462


def test_the_wheel_flag_moves_exactly_the_a_to_5_straights(every_five_card_hand):
    low, high = every_five_card_hand["lowest"], every_five_card_hand["second_highest"]
    moved = {v: n for v, n in low.items() if v not in high}
    assert sorted(moved.values()) == [4, 1020]  # the wheel straight flushes and straights


def test_exhaustive_three_card_counts():
    """All 22,100 three-card hands: trips 52, pair 3,744, high card 18,304."""
    counts = all_three_card_counts()
    assert dict(counts) == {Category.THREE_OF_A_KIND: 52, Category.PAIR: 3744, Category.HIGH_CARD: 18304}
    assert len({eval3(tuple(CARD_KEY[c] for c in h)) for h in [cards("AS KH QD"), cards("AD KC QS")]}) == 1
