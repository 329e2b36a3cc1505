"""The lease helper of the store, on SQLite and on PostgreSQL, in both of its
shapes: a lease kept in two columns of a row that lives on its own (slots,
hosted builds and validations) and a row that is the lease (hosted seats)."""

from __future__ import annotations

import threading
import time
from typing import Any, Callable, Iterator

import pytest

from arena.storage.base import Store
from arena.storage.lease import Clock, Lease

COLUMNS = Lease("lease_probe", ("k",), "holder", "until_at")
OWN_ROW = Lease("lease_probe_rows", ("k",), "holder", "until_at", own_row=True)
KEYS = ("a", "b")
WAIT_S = 30.0  # a bounded wait for the database's clock to pass a short lease


class Probe:
    """One node's view of the probe tables through its own store."""

    def __init__(self, store: Any, lease: Lease) -> None:
        self.store, self.lease = store, lease
        self.dialect = store.db.dialect

    def claim(self, key: str, node: str, lease_s: float, **kw: Any) -> float | None:
        with self.store.db.tx() as tx:
            return self.lease.claim(tx, Clock.of(self.dialect, kw.pop("now", None)), (key,),
                                    node, lease_s, **kw)

    def renew(self, key: str, node: str, lease_s: float) -> float | None:
        with self.store.db.tx() as tx:
            return self.lease.renew(tx, Clock.of(self.dialect), (key,), node, lease_s)

    def release(self, key: str, node: str) -> bool:
        with self.store.db.tx() as tx:
            return self.lease.release(tx, (key,), node)

    def release_node(self, node: str) -> list[tuple[Any, ...]]:
        with self.store.db.tx() as tx:
            return self.lease.release_node(tx, node)

    def holder(self, key: str) -> str | None:
        live, args = self.lease.live(Clock.of(self.dialect))
        with self.store.db.read() as db:
            row = db.execute(f"SELECT holder FROM {self.lease.table} WHERE k = ? AND {live}",
                             (key, *args)).fetchone()
        return None if row is None else str(row[0])

    def db_now(self) -> float:
        with self.store.db.read() as db:
            return float(db.execute(f"SELECT {self.dialect.now}").fetchone()[0])


@pytest.fixture(params=["columns", "own-row"])
def nodes(request: pytest.FixtureRequest,
          open_at: Callable[[], Store]) -> Iterator[Callable[[], Probe]]:
    """Makes probes (each a node with its own store) on one fresh database."""
    lease = COLUMNS if request.param == "columns" else OWN_ROW
    first = open_at()
    real = first.db.dialect.render("{real}")  # type: ignore[attr-defined]
    with first.db.tx() as tx:  # type: ignore[attr-defined]
        extra = ", open INTEGER NOT NULL DEFAULT 1" if not lease.own_row else ""
        tx.execute(f"CREATE TABLE {lease.table} (k TEXT PRIMARY KEY, holder TEXT,"
                   f" until_at {real}{extra})")
        if not lease.own_row:  # the rows live on their own, unheld
            tx.executemany(f"INSERT INTO {lease.table} (k) VALUES (?)", [(k,) for k in KEYS])
    fresh = [Probe(first, lease)]

    def make() -> Probe:
        return fresh.pop() if fresh else Probe(open_at(), lease)

    yield make


def test_a_free_row_is_claimed_by_one_node_while_its_lease_is_live(nodes) -> None:
    a, b = nodes(), nodes()
    assert a.claim("a", "node-a", 600) is not None
    assert b.claim("a", "node-b", 600) is None
    assert b.holder("a") == "node-a"
    assert b.claim("b", "node-b", 600) is not None  # another row is free


def test_the_lease_runs_until_the_database_clock_plus_its_length(nodes) -> None:
    a = nodes()
    before = a.db_now()
    until = a.claim("a", "node-a", 600)
    after = a.db_now()
    assert until is not None
    assert before + 600 - 1e-3 <= until <= after + 600 + 1e-3


def test_the_holder_claiming_again_renews_unless_told_not_to(nodes) -> None:
    a = nodes()
    first = a.claim("a", "node-a", 600)
    again = a.claim("a", "node-a", 1200)
    assert first is not None and again is not None and again > first
    assert a.claim("a", "node-a", 600, renew_own=False) is None


def test_only_the_holder_renews(nodes) -> None:
    a, b = nodes(), nodes()
    first = a.claim("a", "node-a", 600)
    assert b.renew("a", "node-b", 6000) is None
    assert b.renew("b", "node-b", 6000) is None  # nobody's row: nothing to renew
    renewed = a.renew("a", "node-a", 1200)
    assert first is not None and renewed is not None and renewed > first
    assert b.holder("a") == "node-a"


def test_a_lease_that_ran_out_on_the_database_clock_is_taken_over(nodes, monkeypatch) -> None:
    a, b = nodes(), nodes()
    assert a.claim("a", "node-a", 0.3) is not None
    # A node whose own clock runs far ahead sees the lease as the database does.
    monkeypatch.setattr(time, "time", lambda: 4e9)
    assert b.claim("a", "node-b", 600) is None
    monkeypatch.undo()
    deadline = time.monotonic() + WAIT_S
    while b.claim("a", "node-b", 600) is None:
        assert time.monotonic() < deadline, "node-a's lease never ran out"
        time.sleep(0.05)
    assert a.holder("a") == "node-b"
    assert a.renew("a", "node-a", 600) is None  # the old holder lost it
    assert a.claim("a", "node-a", 600) is None


def test_a_pinned_clock_judges_the_lease_instead_of_the_databases(nodes) -> None:
    a, b = nodes(), nodes()
    now = b.db_now()
    assert a.claim("a", "node-a", 60, now=now) is not None
    assert b.claim("a", "node-b", 60, now=now + 30) is None
    assert b.claim("a", "node-b", 60, now=now + 61) is not None


def test_only_the_holder_releases_and_a_released_row_is_free_at_once(nodes) -> None:
    a, b = nodes(), nodes()
    assert a.claim("a", "node-a", 600) is not None
    assert b.release("a", "node-b") is False
    assert b.claim("a", "node-b", 600) is None
    assert a.release("a", "node-a") is True
    assert a.release("a", "node-a") is False  # once
    assert b.claim("a", "node-b", 600) is not None


def test_a_restarted_node_gives_back_every_row_it_held(nodes) -> None:
    a, b = nodes(), nodes()
    assert a.claim("a", "node-a", 600) is not None
    assert a.claim("b", "node-a", 600) is not None
    assert sorted(a.release_node("node-a")) == [("a",), ("b",)]
    assert a.release_node("node-a") == []
    assert b.claim("a", "node-b", 600) is not None


def test_a_row_that_does_not_meet_the_condition_is_not_claimed(nodes) -> None:
    a = nodes()
    if a.lease.own_row:  # no other columns: a condition is refused, not ignored
        with pytest.raises(ValueError, match="without `when`"):
            a.claim("a", "node-a", 600, when="1 = 1")
        return
    with a.store.db.tx() as tx:
        tx.execute("UPDATE lease_probe SET open = 0 WHERE k = 'a'")
    assert a.claim("a", "node-a", 600, when="open = ?", when_args=(1,)) is None
    assert a.claim("b", "node-a", 600, when="open = ?", when_args=(1,)) is not None


def test_nodes_claiming_one_row_at_once_one_wins(nodes) -> None:
    probes = [nodes() for _ in range(4)]
    for round_ in range(5):
        key = "a" if round_ % 2 == 0 else "b"
        won: list[str] = []
        start = threading.Barrier(len(probes))

        def claim(probe: Probe, node: str) -> None:
            start.wait()
            if probe.claim(key, node, 600) is not None:
                won.append(node)

        threads = [threading.Thread(target=claim, args=(p, f"node-{i}"))
                   for i, p in enumerate(probes)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(WAIT_S)
        assert len(won) == 1, won
        assert probes[0].holder(key) == won[0]
        assert probes[0].release(key, won[0]) is True
