"""Tournament slots as a queue shared by nodes: claims, leases, replays."""

from __future__ import annotations

import threading
import time

import pytest

from arena.storage.base import (
    MatchStatus,
    NotFoundError,
    ScheduledMatch,
    SlotTakenError,
    StorageError,
    TournamentRecord,
    TournamentStatus,
)

from .helpers import finish_kwargs, match, stores_at

LEASE = 30.0


def _tournament(store, tid="t1", n=3):
    store.create_tournament(
        TournamentRecord(id=tid, name="cup", game="muushig", config={},
                         status=TournamentStatus.RUNNING, created_at=1.0),
        [ScheduledMatch(tournament_id=tid, slot=i, players=["a"] * 5, seed=f"s:{i}")
         for i in range(n)])


def _finish(store, slot: int, match_id: str) -> None:
    store.create_match(match(match_id, tournament_id="t1"))
    store.finish_match(match_id, **finish_kwargs(), slot=("t1", slot))


def test_claims_take_open_slots_in_order_until_none_is_left(store):
    _tournament(store)
    claims = [store.claim_slot("t1", "node-a", LEASE, now=100.0) for _ in range(3)]
    assert [c.slot.slot for c in claims] == [0, 1, 2]
    assert all(c.node == "node-a" and c.until == 130.0 for c in claims)
    assert claims[0].slot.seed == "s:0" and claims[0].slot.attempts == 1
    assert store.claim_slot("t1", "node-b", LEASE, now=101.0) is None
    assert [s.attempts for s in store.get_schedule("t1")] == [1, 1, 1]  # a claim is an attempt


def test_a_finished_slot_is_never_claimed_again(store):
    _tournament(store, n=2)
    first = store.claim_slot("t1", "node-a", LEASE, now=100.0)
    _finish(store, first.slot.slot, "m0")
    # Long after every lease ran out only the unfinished slot comes back.
    again = store.claim_slot("t1", "node-b", LEASE, now=10_000.0)
    assert again.slot.slot == 1
    assert store.claim_slot("t1", "node-b", LEASE, now=20_000.0).slot.slot == 1
    assert store.get_schedule("t1")[0].match_id == "m0"


def test_an_expired_lease_is_replayed_by_another_node(store):
    _tournament(store, n=1)
    dead = store.claim_slot("t1", "node-a", LEASE, now=100.0)
    assert store.claim_slot("t1", "node-b", LEASE, now=129.0) is None  # still leased
    taken = store.claim_slot("t1", "node-b", LEASE, now=131.0)
    assert taken.slot.slot == dead.slot.slot and taken.slot.attempts == 2
    # The dead node, back, cannot renew: it must abandon its match.
    assert not store.renew_lease("t1", 0, "node-a", LEASE, now=132.0)
    assert store.renew_lease("t1", 0, "node-b", LEASE, now=150.0)
    assert store.claim_slot("t1", "node-c", LEASE, now=170.0) is None  # renewed to 180


def test_a_renewed_lease_keeps_the_slot(store):
    _tournament(store, n=1)
    store.claim_slot("t1", "node-a", LEASE, now=100.0)
    for t in (120.0, 140.0, 160.0):
        assert store.renew_lease("t1", 0, "node-a", LEASE, now=t)
    assert store.claim_slot("t1", "node-b", LEASE, now=185.0) is None


def test_a_released_slot_is_claimable_at_once(store):
    _tournament(store, n=1)
    store.claim_slot("t1", "node-a", LEASE, now=100.0)
    assert not store.release_slot("t1", 0, "node-b")  # not its slot
    assert store.release_slot("t1", 0, "node-a")
    assert store.claim_slot("t1", "node-b", LEASE, now=101.0).slot.slot == 0


def test_finishing_ends_the_lease_and_a_late_replay_is_refused(store):
    _tournament(store, n=1)
    store.claim_slot("t1", "node-a", LEASE, now=100.0)
    store.claim_slot("t1", "node-b", LEASE, now=200.0)  # node-a was presumed dead
    _finish(store, 0, "m-b")
    assert not store.renew_lease("t1", 0, "node-b", LEASE)  # finished: nothing to renew
    with pytest.raises(SlotTakenError):
        _finish(store, 0, "m-a")  # node-a was only slow: its result does not count twice


def test_leased_elsewhere_counts_other_nodes_live_unfinished_slots(store):
    _tournament(store, "t1", n=3)
    _tournament(store, "t2", n=2)
    store.lease_slot("t1", 0, "node-a", LEASE, now=100.0)
    store.lease_slot("t1", 1, "node-b", LEASE, now=100.0)
    store.lease_slot("t2", 0, "node-b", LEASE, now=100.0)
    store.lease_slot("t1", 2, "node-b", LEASE, now=100.0)
    _finish(store, 2, "m2")  # played out: no table any more
    assert store.leased_elsewhere(["t1", "t2"], "node-a", now=110.0) == 2
    assert store.leased_elsewhere(["t1"], "node-a", now=110.0) == 1
    assert store.leased_elsewhere(["t1", "t2"], "node-b", now=110.0) == 1
    assert store.leased_elsewhere([], "node-a", now=110.0) == 0
    # A node that died holds nothing once its leases ran out.
    assert store.leased_elsewhere(["t1", "t2"], "node-a", now=131.0) == 0


def test_queue_errors(store):
    with pytest.raises(NotFoundError):
        store.claim_slot("nope", "node-a", LEASE)
    _tournament(store, n=1)
    with pytest.raises(StorageError, match="more than 0 seconds"):
        store.claim_slot("t1", "node-a", 0)


def test_nodes_claiming_at_once_never_get_the_same_slot(open_at):
    """Eight nodes (stores) claim 40 slots concurrently: each slot exactly once."""
    nodes = [open_at() for _ in range(8)]
    _tournament(nodes[0], n=40)
    start = threading.Barrier(len(nodes))
    claimed: dict[str, list[int]] = {}
    errors: list[BaseException] = []

    def work(i: int) -> None:
        mine = claimed.setdefault(f"node-{i}", [])
        try:
            start.wait()
            while (lease := nodes[i].claim_slot("t1", f"node-{i}", LEASE)) is not None:
                mine.append(lease.slot.slot)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(nodes))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors
    every = sorted(s for slots in claimed.values() for s in slots)
    assert every == list(range(40))
    schedule = nodes[0].get_schedule("t1")
    assert [s.attempts for s in schedule] == [1] * 40


# -- nodes sharing one database -------------------------------------------------

def test_a_node_starting_up_aborts_only_its_own_unfinished_matches(db_location):
    with stores_at(db_location, "node-a", "node-b") as (a, b):
        a.create_match(match("ma"))
        b.create_match(match("mb"))
        assert a.get_match("ma").node == "node-a"
        assert b.abort_unfinished("node restarted") == ["mb"]  # node-b restarts
        assert a.get_match("ma").status is MatchStatus.RUNNING  # node-a plays on
        # A node taking over a dead node's slots also closes its matches.
        assert b.abort_unfinished("node-a died", node="node-a") == ["ma"]


def test_a_store_without_a_node_name_aborts_no_named_nodes_match(db_location, monkeypatch):
    monkeypatch.delenv("ARENA_NODE", raising=False)
    with stores_at(db_location, "node-a", None) as (named, alone):
        named.create_match(match("m1"))
        alone.create_match(match("m2"))
        assert alone.get_match("m2").node is None
        assert alone.abort_unfinished() == ["m2"]
        assert named.get_match("m1").status is MatchStatus.RUNNING


def test_the_node_name_comes_from_the_environment(db_location, monkeypatch):
    from arena.storage import open_store

    monkeypatch.setenv("ARENA_NODE", "node-env")
    store = open_store(db_location)
    try:
        store.create_match(match("m1"))
        assert store.get_match("m1").node == "node-env"
    finally:
        store.close()


def test_a_node_whose_clock_runs_ahead_takes_no_live_lease(open_at, monkeypatch):
    """Leases are judged on the database's clock: a node 45 s ahead sees
    another node's 30 s lease as live, as it is."""
    on_time, ahead = open_at(), open_at()
    _tournament(on_time, n=1)
    held = on_time.claim_slot("t1", "node-a", 30.0)
    assert held is not None
    real = time.time
    monkeypatch.setattr(time, "time", lambda: real() + 45.0)
    assert ahead.claim_slot("t1", "node-b", 30.0) is None
    assert on_time.renew_lease("t1", 0, "node-a", 30.0)
    assert ahead.claim_slot("t1", "node-b", 30.0) is None
