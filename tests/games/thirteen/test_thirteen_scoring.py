"""Rules §3–4: fouls, segment points and bonuses, shots, the home run."""

import pytest

from arena.games.thirteen.scoring import rank_places, score_deal, segment_points

from .helpers import seat, value

# Hand-built seats (strengths only: score_deal never sees the cards).
STRONG = seat("AS AH 2D", "KS KH KD 3C 3H", "9C 9D 9H 9S 4D")  # pair A / full house / four 9s
MIDDLING = seat("KC QC 2C", "5S 5H 6S 6H 7D", "JS JH JC 2H 3S")  # K high / two pair / trips
WEAK = seat("2S 3H 5D", "4S 4H 6D 7C 8H", "TS TH JD QC 8S")  # 5 high / pair 4 / pair T
FOULED = seat("AS AH AD", "2S 3H 5D 7C 9H", "KS KH 4D 6C 8H")  # trips in front of a high card


def score(*seats, shoot="plus3", mfh=2):
    return score_deal(list(seats), shoot=shoot, mid_full_house_bonus=mfh)


@pytest.mark.parametrize(
    "segment, hand, mfh, points",
    [
        (0, "AS AH KD", 2, 1),
        (0, "5S 5H 5D", 2, 2),  # front trips +1
        (1, "2D 5D 9D JD KD", 2, 1),  # a middle flush: no bonus
        (1, "QS QH QD 4C 4H", 2, 3),  # middle full house +2 ...
        (1, "QS QH QD 4C 4H", 1, 2),  # ... or +1 with mid_full_house_bonus = 1
        (1, "7S 7H 7D 7C 2H", 2, 4),  # middle four of a kind +3
        (1, "9H TH JH QH KH", 2, 5),  # middle straight flush +4
        (1, "AH 2H 3H 4H 5H", 2, 5),  # the wheel straight flush is one too
        (2, "QS QH QD 4C 4H", 2, 1),  # a back full house: no bonus
        (2, "7S 7H 7D 7C 2H", 2, 3),  # back four of a kind +2
        (2, "9H TH JH QH KH", 2, 4),  # back straight flush +3
        (2, "5S 5H 5D KC 2H", 2, 1),
    ],
)
def test_segment_points_are_one_plus_the_winners_bonus(segment, hand, mfh, points):
    assert segment_points(segment, value(hand), mfh) == points


def test_pair_of_seats_is_zero_sum_with_a_shot_plus3():
    s = score(STRONG, WEAK)
    # front 1 + middle full house 3 + back four of a kind 3, shot +3
    assert s.pairs == ((0, 10), (-10, 0))
    assert s.scores == (10, -10)
    assert s.shots[0][1] and not s.shots[1][0]


def test_shot_double_doubles_the_pairs_whole_net():
    assert score(STRONG, WEAK, shoot="double").pairs[0][1] == 14


def test_mid_full_house_bonus_one():
    assert score(STRONG, WEAK, mfh=1).pairs[0][1] == 9


def test_bonus_depends_only_on_the_winners_hand():
    a = seat("2S 3H 5D", "KS KH KD 3C 3H", "2C 2D 2H 2S 5C")  # full house middle, four 2s back
    b = seat("AS KH QD", "7S 7H 7D 7C 2H", "9H TH JH QH KH")  # four 7s middle, straight flush back
    assert not a.fouled and not b.fouled
    s = score(a, b)
    # b: front 1, middle four of a kind 1+3 (a's full house earns nothing),
    # back straight flush 1+3, shot +3
    assert s.pairs[1][0] == 1 + 4 + 4 + 3


def test_a_tied_segment_scores_nothing_and_prevents_the_shot():
    a = seat("AS KH QD", "5S 5H 6S 6H 7D", "JS JH JC 2H 3S")
    b = seat("AD KC QS", "4S 4H 6D 7C 8H", "TS TH JD QC 8S")
    s = score(a, b)
    assert s.pairs[0][1] == 2
    assert not s.shots[0][1]


def test_without_a_shot_segments_are_netted():
    a = seat("AS KH QD", "4S 4H 6D 7C 8H", "JS JH JC 2H 3S")  # wins front and back
    b = seat("2S 3H 5D", "5S 5H 6S 6H 7D", "TS TH TD QC 8S")  # wins the middle
    assert not a.fouled and not b.fouled
    assert score(a, b).pairs[0][1] == 1 - 1 + 1


def test_home_run_doubles_every_pair_after_the_shot_bonus():
    s = score(STRONG, MIDDLING, WEAK)
    assert s.home_runs == (True, False, False)
    assert s.pairs[0] == (0, 20, 20)  # (7 + 3) * 2 each
    assert s.pairs[1] == (-20, 0, 6)  # MIDDLING shoots WEAK: 3 + 3, no home run
    assert s.scores == (40, -14, -26)


def test_home_run_after_shot_doubling_is_times_four():
    s = score(STRONG, MIDDLING, WEAK, shoot="double")
    assert s.pairs[0] == (0, 28, 28)  # 7 * 2 * 2


def test_home_run_needs_at_least_two_opponents():
    s = score(STRONG, WEAK)
    assert s.home_runs == (False, False)
    assert s.pairs[0][1] == 10


def test_home_run_needs_every_opponent_shot():
    partial = seat("AD AC KD", "5S 5H 6S 6H 7D", "QS QH QC 2H 3S")  # its front beats STRONG's
    s = score(STRONG, partial, WEAK)
    assert not s.home_runs[0]
    assert s.pairs[0][1] == -1 + 3 + 3 and s.pairs[0][2] == 10


def test_fouled_seat_loses_all_three_segments_and_pays_winners_bonuses_and_shot():
    assert FOULED.fouled and not WEAK.fouled
    s = score(WEAK, FOULED)
    assert s.fouled == (False, True)
    assert s.pairs[0][1] == 1 + 1 + 1 + 3
    assert score(STRONG, FOULED).pairs[0][1] == 1 + 3 + 3 + 3
    assert score(STRONG, FOULED, shoot="double").pairs[0][1] == (1 + 3 + 3) * 2


def test_fouled_against_fouled_scores_zero():
    other = seat("KS KH KD", "2S 3H 5D 7C 9H", "AS AH 4D 6C 8H")
    s = score(FOULED, other)
    assert s.pairs == ((0, 0), (0, 0))


def test_a_fouled_opponent_counts_as_shot_for_the_home_run():
    s = score(STRONG, WEAK, FOULED)
    assert s.home_runs == (True, False, False)
    assert s.pairs[0] == (0, 20, 20)
    assert s.pairs[1][2] == 6


def test_equal_front_and_middle_is_not_a_foul():
    assert not seat("KS KH 9D", "KD KC 9S 3C 2H", "AS AH AD 4C 4H").fouled
    assert seat("KS KH TD", "KD KC 9S 8C 7H", "AS AH AD 4C 4H").fouled


def test_places_share_equal_totals():
    assert rank_places([5, 5, -3, -7]) == [1, 1, 3, 4]
    assert rank_places([0, 0, 0, 0]) == [1, 1, 1, 1]
    assert rank_places([-1, 4, 4, -7]) == [3, 1, 1, 4]
