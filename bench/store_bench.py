"""SQLite against PostgreSQL in the same run: the store alone, then the server.

    python bench/store_bench.py [--tables 200] [--skip-server]

A throwaway PostgreSQL cluster is started for the run (the test suite's,
``tests/storage/pg_cluster.py``: a Unix socket, ``fsync=off``, so commit
figures are CPU and protocol, not disk) and stopped at the end; SQLite
writes to a temporary file with its usual settings.

1. The store alone, on the writer thread's path: event batches as the store
   writer hands them over (``append_rows_many``: 50 matches × 20 events per
   transaction), then ``finish_match`` (a durable commit each), then
   ``claim_slot``. Printed: operations per second.
2. The server (``bench/inproc_bench.py``'s in-process bots) at ``--tables``
   tables: CPU µs per decision of the loop thread and of the storage thread,
   and for PostgreSQL also the database server's own CPU (its processes
   read from /proc), which SQLite spends inside the storage thread.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import structlog

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from arena.storage import open_store  # noqa: E402
from arena.storage.base import (  # noqa: E402
    MatchRecord,
    MatchStatus,
    ScheduledMatch,
    SeatFaults,
    TournamentRecord,
    TournamentStatus,
)
from proctree import ProcUnavailable, process_cpu_s  # noqa: E402 - bench/, beside this script

MATCHES_PER_BATCH = 50
EVENTS_PER_MATCH = 20


def _match(match_id: str) -> MatchRecord:
    return MatchRecord(id=match_id, game="muushig", players=["a", "b", "c", "d", "e"],
                       rules={}, limits={}, status=MatchStatus.RUNNING,
                       started_at=time.time())


def store_figures(location: str, batches: int, finishes: int) -> dict[str, float]:
    store = open_store(location)
    try:
        for m in range(MATCHES_PER_BATCH):
            store.create_match(_match(f"m{m}"))
        event = json.dumps({"kind": "play", "seat": 1, "card": "AS"})
        t0 = time.perf_counter()
        for b in range(batches):
            rows = {f"m{m}": [(b * EVENTS_PER_MATCH + i, time.time(), event)
                              for i in range(EVENTS_PER_MATCH)]
                    for m in range(MATCHES_PER_BATCH)}
            failed = store.append_rows_many(rows)
            assert not failed, failed
        append_s = time.perf_counter() - t0
        for m in range(finishes):
            store.create_match(_match(f"f{m}"))
        t0 = time.perf_counter()
        for m in range(finishes):
            store.finish_match(f"f{m}", result={"stars": [1] * 5}, reveal=[],
                               faults=[SeatFaults()] * 5, latency_ms=[[1.0]] * 5,
                               finished_at=time.time())
        finish_s = time.perf_counter() - t0
        store.create_tournament(
            TournamentRecord(id="t", name="t", game="muushig", config={},
                             status=TournamentStatus.RUNNING, created_at=time.time()),
            [ScheduledMatch(tournament_id="t", slot=i, players=["a"] * 5, seed=str(i))
             for i in range(finishes)])
        t0 = time.perf_counter()
        while store.claim_slot("t", "node", 30.0) is not None:
            pass
        claim_s = time.perf_counter() - t0
    finally:
        store.close()
    events = batches * MATCHES_PER_BATCH * EVENTS_PER_MATCH
    return {"events/s": events / append_s, "batches/s": batches / append_s,
            "finishes/s": finishes / finish_s, "claims/s": finishes / claim_s}


def _process_cpu_s(pids: list[int]) -> float:
    total = 0.0
    for pid in pids:
        try:
            total += process_cpu_s(pid)
        except ProcUnavailable:
            continue
    return total


def _postgres_pids(data_dir: Path) -> Callable[[], list[int]]:
    """The cluster's processes (the postmaster and its children), read anew
    each call: backends come and go."""
    def pids() -> list[int]:
        try:
            master = int((data_dir / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError):
            return []
        out = [master]
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                except OSError:
                    continue
                if int(stat[1]) == master:
                    out.append(int(entry.name))
        return out
    return pids


def server_figures(location: str, tables: int, pids: Callable[[], list[int]]
                   ) -> dict[str, float]:
    import inproc_bench

    inproc_bench.SqliteStore = open_store  # the benchmark opens whatever --db names
    before = _process_cpu_s(pids())
    cpu0 = time.thread_time()
    rate, decisions, writer_s, _rss = asyncio.run(inproc_bench.measure(tables, 1, location))
    loop_s = time.thread_time() - cpu0
    db_s = _process_cpu_s(pids()) - before
    return {"decisions/s": rate, "loop µs": loop_s / decisions * 1e6,
            "storage µs": writer_s / decisions * 1e6, "db server µs": db_s / decisions * 1e6}


def _print(title: str, rows: dict[str, dict[str, float]]) -> None:
    keys = list(next(iter(rows.values())))
    print(title)
    print("  " + "backend".ljust(12) + "".join(k.rjust(14) for k in keys))
    for name, values in rows.items():
        print("  " + name.ljust(12) + "".join(f"{values[k]:14,.1f}" for k in keys))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tables", type=int, default=200)
    parser.add_argument("--batches", type=int, default=200)
    parser.add_argument("--finishes", type=int, default=300)
    parser.add_argument("--skip-server", action="store_true")
    args = parser.parse_args()
    logging.disable(logging.CRITICAL)
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.CRITICAL))
    cluster: Any = None
    try:
        from tests.storage.pg_cluster import PgCluster

        cluster = PgCluster.start()
        with tempfile.TemporaryDirectory() as tmp:
            def pg() -> str:
                return str(cluster.create_database("bench"))

            store_rows = {
                "sqlite": store_figures(str(Path(tmp) / "s.db"), args.batches, args.finishes),
                "postgresql": store_figures(pg(), args.batches, args.finishes)}
            _print("store alone (one thread, same run)", store_rows)
            if not args.skip_server:
                data_dir = cluster.data_dir
                server_rows = {
                    "sqlite": server_figures(str(Path(tmp) / "srv.db"), args.tables,
                                             lambda: []),
                    "postgresql": server_figures(pg(), args.tables, _postgres_pids(data_dir))}
                _print(f"server, {args.tables} tables, CPU per decision", server_rows)
    finally:
        if cluster is not None:
            cluster.stop()


if __name__ == "__main__":
    main()
