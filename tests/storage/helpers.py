"""Record builders shared by the storage tests (and the crash worker), and
stores of several nodes on one location."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from typing import Any

from arena.storage import open_store
from arena.storage.base import MatchRecord, MatchStatus, SeatFaults, StoredEvent, Store

PLAYERS = ["ann", "bob", "cid", "dan", "eve"]


def match(match_id: str, *, started_at: float = 1000.0, players: list[str] | None = None,
          tournament_id: str | None = None, seed: str | None = "s:0") -> MatchRecord:
    return MatchRecord(id=match_id, game="muushig", players=list(players or PLAYERS),
                       rules={"max_hands": 200}, limits={"decision_ms": 1000, "bank_ms": 0},
                       status=MatchStatus.RUNNING, started_at=started_at,
                       tournament_id=tournament_id, seed=seed)


def events(start: int, count: int) -> list[StoredEvent]:
    return [StoredEvent(seq=i, at=2000.0 + i, data={"kind": "play", "seat": i % 5, "n": i})
            for i in range(start, start + count)]


def result(stars: list[int], sums: list[int], ranks: list[int]) -> dict:
    return {"stars": stars, "final_scores": [[s] * 5 for s in sums], "sums": sums,
            "ranks": ranks}


RESULT = result([2, 1, 1, 1, 0], [10, 20, 30, 40, 50], [1, 2, 3, 4, 5])
REVEAL = [{"round": 0, "hand": 0, "salt": "x", "deck": ["AS"] * 32}]
FAULTS = [SeatFaults(), SeatFaults(timeouts=2), SeatFaults(), SeatFaults(illegal=1),
          SeatFaults(disconnects=1, autopilot=True)]
LATENCY = [[1.5, 2.0], [3.0], [], [4.0], [5.0, 6.0]]


def finish_kwargs(finished_at: float = 1100.0) -> dict:
    return {"result": RESULT, "reveal": REVEAL, "faults": FAULTS, "latency_ms": LATENCY,
            "finished_at": finished_at}


def read_while_writing(store, match_id: str = "m1", readers: int = 4) -> list[int]:
    """Write 300 events in batches while ``readers`` threads read the log;
    every read must be a whole prefix (never a torn log). Returns the
    lengths the readers saw."""
    import threading

    store.create_match(match(match_id))
    stop = threading.Event()
    errors: list[BaseException] = []
    seen: list[int] = []

    def reader() -> None:
        try:
            while not stop.is_set():
                got = store.get_events(match_id)
                assert [e.seq for e in got] == list(range(len(got)))
                seen.append(len(got))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=reader) for _ in range(readers)]
    for t in threads:
        t.start()
    for i in range(0, 300, 10):
        store.append_events(match_id, events(i, 10))
    stop.set()
    for t in threads:
        t.join(timeout=10)
    assert not errors and seen
    assert len(store.get_events(match_id)) == 300
    return seen


@contextlib.contextmanager
def stores_at(location: str, *nodes: str | None) -> Iterator[list[Store]]:
    """One store per node name (None: unnamed) on one location, as separate
    processes open it; all closed at the end."""
    stores: list[Store] = []
    try:
        for node in nodes:
            stores.append(open_store(location, node=node))
        yield stores
    finally:
        for store in stores:
            store.close()


@contextlib.asynccontextmanager
async def serving(store: Store) -> AsyncIterator[Any]:
    """A bot server (no web, no matchmaking) started on ``store``: it claims
    the store's node name and aborts what it owns; stopped at the end."""
    from arena.server.config import ServerConfig
    from arena.server.server import ArenaServer

    server = ArenaServer(ServerConfig(port=0, http_port=None, matchmaking=False), store)
    await server.start()
    try:
        yield server
    finally:
        await server.stop()
