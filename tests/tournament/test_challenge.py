"""The rules of challenges on demand, one test per rule (pure functions)."""

from __future__ import annotations

import pytest

from arena.storage.base import ScheduledMatch
from arena.tournament.challenge import (
    DAY_S,
    ChallengeError,
    ChallengeLimits,
    ChallengeRequest,
    ChallengeUse,
    QuotaExceededError,
    challenge_schedule,
    check_quota,
    check_request,
    is_done,
    may_start,
    next_slots,
)

LIMITS = ChallengeLimits(per_day=10, in_flight=4, max_matches=6, table_share=0.25,
                         min_tables=1, max_attempts=2)


def ask(*opponents: str, matches: int = 2) -> ChallengeRequest:
    return ChallengeRequest(challenger="me", game="muushig", opponents=opponents,
                            matches=matches)


def test_a_challenge_names_opponents_the_table_can_hold():
    check_request(ask("a", "b", "c", "d"), seats=5, eligible={"a", "b", "c", "d"}, limits=LIMITS)
    with pytest.raises(ChallengeError, match="at most 4 opponents"):
        check_request(ask("a", "b", "c", "d", "e"), seats=5, eligible=set("abcde"),
                      limits=LIMITS)
    with pytest.raises(ChallengeError, match="at least one opponent"):
        check_request(ask(), seats=5, eligible=set(), limits=LIMITS)


def test_only_bots_open_to_challenges_may_be_named():
    with pytest.raises(ChallengeError, match="not open to challenges in muushig: stranger"):
        check_request(ask("a", "stranger"), seats=5, eligible={"a"}, limits=LIMITS)


def test_a_bot_cannot_challenge_itself_or_name_one_twice():
    with pytest.raises(ChallengeError, match="cannot challenge itself"):
        check_request(ask("me"), seats=5, eligible={"me"}, limits=LIMITS)
    with pytest.raises(ChallengeError, match="named once"):
        check_request(ask("a", "a"), seats=5, eligible={"a"}, limits=LIMITS)


def test_the_number_of_matches_is_bounded():
    with pytest.raises(ChallengeError, match="1 to 6"):
        check_request(ask("a", matches=7), seats=5, eligible={"a"}, limits=LIMITS)
    with pytest.raises(ChallengeError, match="1 to 6"):
        check_request(ask("a", matches=0), seats=5, eligible={"a"}, limits=LIMITS)


def test_matches_waiting_to_be_played_are_capped():
    earlier = [ChallengeUse(created_at=0.0, matches=3, unplayed=3)]
    check_quota("me", 1, earlier, now=10.0, limits=LIMITS)
    with pytest.raises(QuotaExceededError, match="3 challenge matches waiting.*at most 1 now"):
        check_quota("me", 2, earlier, now=10.0, limits=LIMITS)


def test_matches_asked_for_per_day_are_capped_and_free_up_a_day_later():
    now = 5 * DAY_S
    earlier = [ChallengeUse(created_at=now - 3000.0, matches=6, unplayed=0),
               ChallengeUse(created_at=now - 1000.0, matches=3, unplayed=0)]
    check_quota("me", 1, earlier, now=now, limits=LIMITS)
    with pytest.raises(QuotaExceededError, match="9 challenge matches in the last 24 hours") \
            as refused:
        check_quota("me", 2, earlier, now=now, limits=LIMITS)
    # The oldest (6 matches) leaves the window first, and that is enough.
    assert refused.value.retry_after_s == pytest.approx(DAY_S - 3000.0)
    check_quota("me", 2, earlier, now=now + DAY_S - 2999.0, limits=LIMITS)


def test_challenges_of_other_days_do_not_count():
    earlier = [ChallengeUse(created_at=0.0, matches=10, unplayed=0)]
    check_quota("me", 4, earlier, now=DAY_S + 1.0, limits=LIMITS)


def test_challenge_tables_keep_to_their_share_of_the_running_tables():
    assert may_start(0, 0, LIMITS)  # an idle arena plays a challenge
    assert not may_start(1, 0, LIMITS)
    assert may_start(1, 7, LIMITS)  # the second is 2 of 9 tables
    assert not may_start(2, 7, LIMITS)  # a third would be 3 of 10
    assert may_start(2, 10, LIMITS)


def test_each_match_seats_the_bots_and_house_bots_rotated():
    slots = challenge_schedule("challenge_x", ask("a", "b", matches=6), seats=5,
                               house_bot="heuristic")
    assert slots[0].players == ["me", "a", "b", "house-heuristic-1", "house-heuristic-2"]
    assert slots[1].players == ["a", "b", "house-heuristic-1", "house-heuristic-2", "me"]
    assert [s.players.index("me") for s in slots] == [0, 4, 3, 2, 1, 0]
    assert len({s.seed for s in slots}) == 6


def test_aborted_matches_are_tried_again_until_given_up():
    slots = [ScheduledMatch("c", 0, ["me"], "s0", match_id="m0"),
             ScheduledMatch("c", 1, ["me"], "s1", attempts=1),
             ScheduledMatch("c", 2, ["me"], "s2", attempts=2),
             ScheduledMatch("c", 3, ["me"], "s3")]
    assert [s.slot for s in next_slots(slots, {3}, LIMITS)] == [1]
    assert not is_done(slots, LIMITS)
    done = [slots[0], slots[2]]
    assert is_done(done, LIMITS)
