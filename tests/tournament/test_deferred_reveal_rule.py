"""The rule of the deferred reveal (arena/tournament/reveals.py): a match is
sealed when another slot deals its decks, and its deck set is revealed only
when every slot that deals it is played."""

from __future__ import annotations

from arena.storage.base import ScheduledMatch
from arena.tournament.reveals import deck_set, deck_set_over, is_sealed

PLAYERS = ["a", "b", "house-random-1", "house-random-2", "house-random-3"]


def slot(i: int, seed: str, match_id: str | None = None) -> ScheduledMatch:
    return ScheduledMatch(tournament_id="t", slot=i, players=PLAYERS, seed=seed,
                          match_id=match_id)


def test_every_rotation_of_a_duplicate_table_is_sealed_the_last_one_too():
    schedule = [slot(0, "s0"), slot(1, "s0"), slot(2, "s0", "m2")]
    assert all(is_sealed(schedule, s) for s in schedule)


def test_a_table_played_once_is_not_sealed():
    schedule = [slot(0, "s0"), slot(1, "s1")]
    assert not any(is_sealed(schedule, s) for s in schedule)


def test_a_deck_set_is_over_only_when_every_slot_that_deals_it_is_played():
    schedule = [slot(0, "s0", "m0"), slot(1, "s0"), slot(2, "s1", "m2")]
    assert not deck_set_over(schedule, schedule[0])
    assert deck_set_over(schedule, schedule[2])
    schedule[1] = slot(1, "s0", "m1")
    assert deck_set_over(schedule, schedule[0])
    assert [s.slot for s in deck_set(schedule, schedule[1])] == [0, 1]
