"""The server's own work per decision, without sockets.

    python bench/inproc_bench.py [--tables 200] [--matches 1] [--profile]

A real :class:`ArenaServer` (lobby, tables, storage writer thread, live hub)
with ``--tables`` × 5 connections whose transports are in-process fakes: a
bot "answers" by feeding its action's bytes to the connection's
``data_received`` on the loop's next turn. Everything the server does per
decision runs (decoding, checks, the engine, encoding, storage, the hub);
only the kernel's socket work and the bot process are missing, so the
figure is steady where the network benchmarks are noisy, and it is the one
to watch while optimising the server's Python. Printed: decisions per
second, CPU µs per decision of the loop thread and of the storage thread, and
the RSS per table (its peak while playing minus the RSS before the bots
connect; the fake bots decode with little memory of their own).

``--tracemalloc`` traces allocations and prints the server's memory per
table at its peak, the fake bots' allocations apart, by source line.

``--profile`` runs the loop thread under cProfile and prints the top
functions.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import json
import logging
import os
import pstats
import random
import sys
import tempfile
import threading
import time
import tracemalloc
from pathlib import Path
from typing import Any

import msgpack
import structlog

# BENCH_CODE: another checkout of the code to measure (a baseline) with
# this same benchmark.
sys.path.insert(0, os.environ.get("BENCH_CODE") or str(Path(__file__).resolve().parent.parent))

from arena.server.config import ServerConfig  # noqa: E402
from arena.server.server import ArenaServer  # noqa: E402
from arena.storage.sqlite import SqliteStore  # noqa: E402
from protocol.codec import Encoding, encode  # noqa: E402


# CPU seconds the fake bots spent reading frames and choosing answers.
BOT_CPU = [0.0]


class FakeTransport(asyncio.Transport):
    """Reads the server's frames like a bot would and answers every request
    with a random legal action on the loop's next turn."""

    def __init__(self, index: int, matches: int, done: asyncio.Future[None]) -> None:
        super().__init__()
        # A bot's decoder of its own: whole frames are cut from what has
        # arrived and unpacked one by one. (A streaming ``msgpack.Unpacker``
        # starts with a 512 KiB buffer per bot, which would be counted as
        # the server's memory.)
        self.pending = b""
        self.rng = random.Random(index)
        self.left = matches
        self.done = done
        self.conn: Any = None
        self.closing = False

    # -- what the server calls --
    def write(self, data: bytes | bytearray | memoryview) -> None:
        # The fake bot's own work is counted apart: it is not the server's.
        t0 = time.thread_time()
        self._write(data)
        BOT_CPU[0] += time.thread_time() - t0

    def _write(self, data: bytes | bytearray | memoryview) -> None:
        buffer = self.pending + bytes(data) if self.pending else bytes(data)
        answers = []
        at, end = 0, len(buffer)
        while end - at >= 4:
            size = int.from_bytes(buffer[at:at + 4], "big")
            if end - at - 4 < size:
                break
            message = msgpack.unpackb(buffer[at + 4:at + 4 + size], raw=False)
            at += 4 + size
            kind = message["type"]
            if kind == "request":
                answers.append(encode({"type": "action", "match": message["match"],
                                       "id": message["id"],
                                       "action": self.rng.choice(message["legal"])},
                                      Encoding.MSGPACK))
            elif kind == "match_end":
                self.left -= 1
                if self.left <= 0:
                    answers.append(encode({"type": "bye"}, Encoding.MSGPACK))
        self.pending = buffer[at:]
        if answers:
            asyncio.get_running_loop().call_soon(self.conn.data_received, b"".join(answers))

    def get_write_buffer_size(self) -> int:
        return 0

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        pass  # nothing is ever buffered here

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return ("127.0.0.1", 1) if name == "peername" else default

    def is_closing(self) -> bool:
        return self.closing

    def close(self) -> None:
        if not self.closing:
            self.closing = True
            asyncio.get_running_loop().call_soon(self._lost)

    def abort(self) -> None:
        self.close()

    def _lost(self) -> None:
        self.conn.connection_lost(None)
        if not self.done.done():
            self.done.set_result(None)


def _rss_bytes() -> int:
    try:
        return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return 0


class ServerMemory:
    """The server's own allocations (tracemalloc), the fake bots' left out:
    a snapshot before the bots connect and the largest one while they play."""

    # Allocations made on this file's lines are the fake bots' (their frames
    # and decoded messages) or the benchmark's: not the server's.
    FILTERS = (tracemalloc.Filter(False, __file__), tracemalloc.Filter(False, tracemalloc.__file__))

    def __init__(self) -> None:
        self.start: tracemalloc.Snapshot | None = None
        self.peak: tracemalloc.Snapshot | None = None
        self.start_bytes = self.peak_bytes = 0

    @staticmethod
    def _take() -> tuple[tracemalloc.Snapshot, int]:
        snapshot = tracemalloc.take_snapshot().filter_traces(ServerMemory.FILTERS)
        return snapshot, sum(stat.size for stat in snapshot.statistics("filename"))

    def begin(self) -> None:
        self.start, self.start_bytes = self._take()
        self.peak, self.peak_bytes = self.start, self.start_bytes

    def sample(self) -> float:
        """Take a snapshot, keep it if it is the largest; its cost in seconds."""
        t0 = time.perf_counter()
        snapshot, size = self._take()
        if size > self.peak_bytes:
            self.peak, self.peak_bytes = snapshot, size
        return time.perf_counter() - t0

    def report(self, tables: int, top: int = 25) -> str:
        assert self.start is not None and self.peak is not None
        lines = [f"server memory (tracemalloc, fake bots apart): "
                 f"{(self.peak_bytes - self.start_bytes) / tables / 1024:.1f} KB per table "
                 f"at the peak; largest lines (KB per table, blocks):"]
        for stat in self.peak.compare_to(self.start, "lineno")[:top]:
            frame = stat.traceback[0]
            lines.append(f"  {stat.size_diff / tables / 1024:8.1f} {stat.count_diff:8d}  "
                         f"{frame.filename}:{frame.lineno}")
        return "\n".join(lines)


async def _watch_rss(peak: list[int], memory: ServerMemory | None) -> None:
    while True:
        peak[0] = max(peak[0], _rss_bytes())
        # Snapshots of many tables take long: at most a quarter of the time.
        await asyncio.sleep(0.2 if memory is None else max(0.5, 3 * memory.sample()))


async def measure(tables: int, matches: int, db: str, gc_freeze: bool = False,
                  memory: ServerMemory | None = None) -> tuple[float, int, float, float]:
    """(decisions per second, decisions, storage thread CPU seconds, RSS
    bytes per table: the peak while playing minus the RSS before)."""
    store = SqliteStore(db)
    config = ServerConfig(port=0, http_port=None, db=db, open=True, house_wait_s=None,
                          decision_ms=30_000, bank_ms=0, max_connections=tables * 5 + 10,
                          max_connections_per_address=tables * 5 + 10)
    server = ArenaServer(config, store)
    await server.start()
    if gc_freeze:
        tune_collector()
    loop = asyncio.get_running_loop()
    if memory is not None:
        memory.begin()
    rss0 = _rss_bytes()
    peak = [rss0]
    watcher = asyncio.ensure_future(_watch_rss(peak, memory))
    dones = []
    t0 = time.perf_counter()
    for i in range(tables * 5):
        done: asyncio.Future[None] = loop.create_future()
        transport = FakeTransport(i, matches, done)
        conn = server._new_connection()
        transport.conn = conn
        conn.connection_made(transport)
        conn.data_received(encode({"type": "hello", "protocol": 1, "token": f"bench-{i}",
                                   "name": f"fast{i}"}, Encoding.MSGPACK))
        dones.append(done)
    await asyncio.sleep(0.3)  # every table is playing
    peak[0] = max(peak[0], _rss_bytes())
    if memory is not None:
        memory.sample()
    await asyncio.gather(*dones)
    elapsed = time.perf_counter() - t0
    watcher.cancel()
    decisions = server.metrics.decisions_total
    await server.writer.flush()
    writer_s = _thread_cpu_s(server.writer._thread)
    await server.stop()
    store.close()
    return decisions / elapsed, decisions, writer_s, (peak[0] - rss0) / tables


def turn_latency_ms(db: str) -> tuple[float, float]:
    """(p50, p99) of the stored per-decision latencies: from the request
    leaving the server to its answer being handled, i.e. how long a bot
    that answers at once waits on the busy loop."""
    import sqlite3

    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT latency_ms FROM matches WHERE latency_ms IS NOT NULL").fetchall()
    values = sorted(v for (text,) in rows for seat in json.loads(text) for v in seat)
    if not values:
        return 0.0, 0.0
    return values[len(values) // 2], values[min(len(values) - 1, int(len(values) * 0.99))]


def _thread_cpu_s(thread: threading.Thread) -> float:
    """CPU seconds a running thread has used (Linux: /proc), else 0."""
    try:
        stat = Path(f"/proc/self/task/{thread.native_id}/stat").read_text()
    except OSError:
        return 0.0
    fields = stat.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def tune_collector() -> None:
    """The collector as ``arena serve`` sets it; a tree from before it did
    gets what this benchmark tried then."""
    try:
        from arena.collector import tune_for_serving
    except ImportError:
        gc.collect()
        gc.freeze()
        gc.set_threshold(50_000, 50, 100)
    else:
        tune_for_serving()


class CollectorCost:
    """CPU time of the loop thread's collections and the longest one, from
    ``gc.callbacks`` (measured the same way for every tree)."""

    def __init__(self) -> None:
        self.cpu_s = 0.0
        self.longest_s = 0.0
        self.collections = 0
        self._started = 0.0
        gc.callbacks.append(self._callback)

    def _callback(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._started = time.thread_time()
            return
        spent = time.thread_time() - self._started
        self.cpu_s += spent
        self.longest_s = max(self.longest_s, spent)
        self.collections += 1


def engine_baseline(matches: int = 20) -> float:
    """CPU µs per decision of the bare engine doing what a table asks of it
    per decision (legal list, the seat's observation, apply), no server."""
    from arena.games import get_game

    spec = get_game("muushig")
    rng = random.Random(0)
    decisions = 0
    cpu0 = time.thread_time()
    for m in range(matches):
        engine = spec.new_match(None, random.Random(m), None)
        # A baseline checkout (BENCH_CODE) from before check-then-apply
        # has no ``play``: its ``apply`` took the wire action.
        play = getattr(engine, "play", None) or engine.apply
        engine.start()
        while not engine.finished:
            legal = engine.legal_actions()
            engine.observation(engine.current_seat)  # type: ignore[arg-type]
            play(rng.choice(legal))
            decisions += 1
    return (time.thread_time() - cpu0) / decisions * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tables", type=int, default=200)
    parser.add_argument("--matches", type=int, default=1)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON line")
    parser.add_argument("--gc-freeze", action="store_true",
                        help="the collector as arena serve sets it (arena/collector.py), "
                             "after the server starts")
    parser.add_argument("--tracemalloc", action="store_true",
                        help="trace the server's allocations (the fake bots' apart) and print "
                             "its memory per table at the peak by line; CPU figures are then "
                             "not comparable")
    args = parser.parse_args()
    memory = ServerMemory() if args.tracemalloc else None
    if memory is not None:
        tracemalloc.start()
    logging.disable(logging.CRITICAL)
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.CRITICAL))
    profiler = cProfile.Profile() if args.profile else None
    with tempfile.TemporaryDirectory() as tmp:
        cpu0 = time.thread_time()
        collector = CollectorCost()
        if profiler is not None:
            profiler.enable()
        rate, decisions, writer_s, rss_table = asyncio.run(
            measure(args.tables, args.matches, str(Path(tmp) / "inproc.db"), args.gc_freeze,
                    memory))
        p50, p99 = turn_latency_ms(str(Path(tmp) / "inproc.db"))
        if profiler is not None:
            profiler.disable()
        loop_s = time.thread_time() - cpu0
    base_us = engine_baseline()
    loop_us = loop_s / decisions * 1e6
    bots_us = BOT_CPU[0] / decisions * 1e6
    server_us = loop_us - bots_us
    writer_us = writer_s / decisions * 1e6
    if args.json:
        print(json.dumps({"decisions": decisions, "rate": rate, "loop_us": loop_us,
                          "bots_us": bots_us, "server_loop_us": server_us,
                          "writer_us": writer_us, "server_us": server_us + writer_us,
                          "rss_per_table_kb": rss_table / 1024, "engine_us": base_us,
                          "p50_ms": p50, "p99_ms": p99,
                          "gc_us": collector.cpu_s / decisions * 1e6,
                          "gc_longest_ms": collector.longest_s * 1000,
                          "server_kb_per_table": None if memory is None else
                          (memory.peak_bytes - memory.start_bytes) / args.tables / 1024}))
    else:
        print(f"{decisions} decisions at {rate:,.0f}/s, {args.tables} tables; CPU per decision: "
              f"server loop thread {server_us:.1f} µs (fake bots {bots_us:.1f} µs apart), "
              f"storage thread {writer_us:.1f} µs; server total {server_us + writer_us:.1f} µs; "
              f"RSS {rss_table / 1024:.0f} KB per table; turn latency p50 {p50:.1f} ms, "
              f"p99 {p99:.1f} ms")
        print(f"garbage collector (server and fake bots, their loop thread): "
              f"{collector.cpu_s / decisions * 1e6:.2f} µs CPU per decision in "
              f"{collector.collections} collections, the longest {collector.longest_s * 1000:.1f} ms")
        print(f"baseline, same run: the bare engine (legal list, observation, apply) "
              f"{base_us:.1f} µs per decision; server loop thread / engine: "
              f"{server_us / base_us:.1f}x")
    if memory is not None and not args.json:
        print(memory.report(args.tables))
    if profiler is not None:
        pstats.Stats(profiler).sort_stats("tottime").print_stats(40)


if __name__ == "__main__":
    main()
