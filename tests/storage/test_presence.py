"""Presence rows, the claim that skips slots a node cannot seat, and the
organiser's cancel, on every backend."""

from __future__ import annotations

import contextlib

import pytest

from arena.storage.base import NotFoundError, ScheduledMatch, TournamentRecord, TournamentStatus
from arena.storage.presence import TournamentOverError

LEASE = 30.0


def _tournament(store, tid="t1", players=(("north", "south"),), status=TournamentStatus.PENDING):
    store.create_tournament(
        TournamentRecord(id=tid, name="cup", game="muushig", config={}, status=status,
                         created_at=1.0),
        [ScheduledMatch(tournament_id=tid, slot=i, players=list(p) + ["house:heuristic"] * 3,
                        seed=f"s:{i}") for i, p in enumerate(players)])


def test_presence_says_which_nodes_each_bot_is_connected_to(store):
    store.note_presence("node-1", ["north", "east"])
    store.note_presence("node-2", ["south", "east"])
    assert store.present_bots() == {"east": ["node-1", "node-2"], "north": ["node-1"],
                                    "south": ["node-2"]}
    store.note_presence("node-1", ["east"])  # north left node-1: the node's rows are replaced
    store.drop_presence("node-2")  # node-2 stopped
    assert store.present_bots() == {"east": ["node-1"]}


def test_presence_not_refreshed_goes_stale(store):
    store.note_presence("node-1", ["north"])
    assert store.present_bots(fresh_s=60) == {"north": ["node-1"]}
    assert store.present_bots(fresh_s=-1) == {}  # judged on the database's clock


def test_presence_says_where_bots_reach_each_live_node(store):
    store.note_presence("node-1", ["north"], "10.0.0.1:7000")
    store.note_presence("node-2", ["south"])  # a node that does not know its address
    assert store.node_addresses() == {"node-1": "10.0.0.1:7000"}
    assert store.node_addresses(fresh_s=-1) == {}  # a dead node's address is not given
    store.drop_presence("node-1")
    assert store.node_addresses() == {}


def test_a_claim_skips_slots_this_node_cannot_seat_without_counting_an_attempt(store):
    _tournament(store, players=[("north", "south"), ("north", "east"), ("east", "west")])
    here = {"east", "west", "north"}
    lease = store.claim_slot("t1", "node-1", LEASE,
                             playable=lambda players: {p for p in players
                                                       if not p.startswith("house:")} <= here)
    assert lease is not None and lease.slot.slot == 1
    assert [s.attempts for s in store.get_schedule("t1")] == [0, 1, 0]
    assert store.claim_slot("t1", "node-1", LEASE, playable=lambda p: "south" not in p
                            ).slot.slot == 2
    assert store.claim_slot("t1", "node-1", LEASE, playable=lambda p: "south" not in p) is None
    assert [s.slot for s in store.open_slots("t1")] == [0]


def test_cancel_stops_a_tournament_and_a_runner_never_revives_it(store):
    _tournament(store)
    assert store.mark_running("t1") is True
    assert store.cancel_tournament("t1") is True
    assert store.cancel_tournament("t1") is False  # already
    record = store.get_tournament("t1")
    assert record.status is TournamentStatus.CANCELLED and record.finished_at is not None
    assert store.mark_running("t1") is False
    assert store.get_tournament("t1").status is TournamentStatus.CANCELLED
    # Only the organiser's resume opens it again.
    assert store.reopen_tournament("t1") is True
    assert store.reopen_tournament("t1") is False
    assert store.get_tournament("t1").status is TournamentStatus.PENDING
    assert store.mark_running("t1") is True


def test_a_finished_tournament_cannot_be_cancelled(store):
    _tournament(store, status=TournamentStatus.FINISHED)
    with pytest.raises(TournamentOverError, match="finished"):
        store.cancel_tournament("t1")
    with pytest.raises(NotFoundError):
        store.cancel_tournament("nope")


class _Counted:
    """A transaction's connection that counts the rows its statements name."""

    def __init__(self, db, counts: list[int]) -> None:
        self._db, self._counts = db, counts

    def execute(self, sql, params=()):
        self._counts.append(1)
        return self._db.execute(sql, params)

    def executemany(self, sql, rows):
        rows = list(rows)
        self._counts.append(len(rows))
        return self._db.executemany(sql, rows)

    def __getattr__(self, name):
        return getattr(self._db, name)


def test_a_refresh_writes_only_the_bots_that_came_or_left(store, monkeypatch):
    """A node refreshes its presence every poll: with 1,000 bots connected it
    rewrote 1,000 rows a second on the store's one thread. The rows of bots
    still there are refreshed by one statement; only changes are written."""
    bots = [f"bot-{i:03}" for i in range(200)]
    store.note_presence("node-1", bots)
    counts: list[int] = []
    real_tx = store.db.tx

    @contextlib.contextmanager
    def counted_tx(**options):
        with real_tx(**options) as db:
            yield _Counted(db, counts)

    monkeypatch.setattr(store.db, "tx", counted_tx)
    store.note_presence("node-1", bots)
    assert sum(counts) <= 3, counts
    counts.clear()
    store.note_presence("node-1", bots[1:] + ["bot-new"])  # one left, one came
    assert sum(counts) <= 5, counts
    monkeypatch.undo()
    present = store.present_bots()
    assert sorted(present) == sorted(bots[1:] + ["bot-new"])
    assert all(nodes == ["node-1"] for nodes in present.values())


def test_a_refresh_keeps_rows_fresh(store):
    store.note_presence("node-1", ["north"])
    store.note_presence("node-1", ["north"])  # refreshed, not written again
    assert store.present_bots(fresh_s=60) == {"north": ["node-1"]}
