"""Leasing one given slot (the challenge service's way to play a match on
one node only), on every backend."""

from __future__ import annotations

from arena.storage.base import ScheduledMatch, TournamentRecord, TournamentStatus


def _challenge(store, tid="c1", slots=2):
    store.create_tournament(
        TournamentRecord(id=tid, name="c", game="muushig", config={},
                         status=TournamentStatus.PENDING, created_at=1.0),
        [ScheduledMatch(tournament_id=tid, slot=i, players=["north", "south"], seed=f"s:{i}")
         for i in range(slots)])


def test_a_leased_slot_is_not_leased_again_until_released_or_run_out(store):
    _challenge(store)
    assert store.lease_slot("c1", 0, "node-a", 30.0) is True
    assert store.lease_slot("c1", 0, "node-b", 30.0) is False  # node-a plays it
    assert store.lease_slot("c1", 1, "node-b", 30.0) is True  # another slot is free
    assert store.release_slot("c1", 0, "node-a") is True
    assert store.lease_slot("c1", 0, "node-b", 30.0) is True
    # A lease that has run out (a node that died) is taken over.
    assert store.lease_slot("c1", 1, "node-a", 30.0, now=10**12) is True


def test_a_lease_counts_no_attempt(store):
    _challenge(store)
    store.lease_slot("c1", 0, "node-a", 30.0)
    assert [s.attempts for s in store.get_schedule("c1")] == [0, 0]
