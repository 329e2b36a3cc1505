"""One table of five instant bots over loopback, against a bare round trip.

Prints decisions per second through the arena server (one table, bots in
another process, answering at once) beside a baseline measured in the same
run: a bare asyncio server that sends the same request bytes and reads the
answer, with the same bot process. The ratio is the server's cost per
decision relative to a bare request/response round trip (target ≤ 1.5).

    python bench/server_bench.py [--matches 10] [--baseline-trips 20000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
import tempfile
import time
from pathlib import Path

import structlog

from arena.server.config import ServerConfig
from arena.server.server import ArenaServer
from arena.storage.sqlite import SqliteStore
from protocol.codec import Decoder, Encoding, encode
from sample_request import SAMPLE_REQUEST  # bench/, beside this script

HERE = Path(__file__).resolve().parent


async def spawn_bots(port: int, n: int, matches: int) -> asyncio.subprocess.Process:
    """The bot process; it runs on uvloop too when this process does."""
    paths = [str(HERE.parent), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    env = {"PYTHONPATH": os.pathsep.join(paths)}
    if using_uvloop():
        env["BENCH_UVLOOP"] = "1"
    return await asyncio.create_subprocess_exec(
        sys.executable, str(HERE / "fastbot.py"), str(port), str(n), str(matches),
        cwd=str(HERE.parent), env=env)


def using_uvloop() -> bool:
    return type(asyncio.get_event_loop_policy()).__module__.startswith("uvloop")


def use_event_loop(name: str) -> None:
    """``asyncio`` (the standard loop) or ``uvloop`` (if installed)."""
    if name == "uvloop":
        import uvloop  # not a dependency of the arena: pip install uvloop to compare

        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())


class Baseline(asyncio.Protocol):
    """Sends a request, waits for the answer, repeats: a bare round trip."""

    def __init__(self, trips: int, done: asyncio.Future[float]) -> None:
        self.trips = trips
        self.done = done
        self.decoder = Decoder.for_server()
        self.request = encode(SAMPLE_REQUEST, Encoding.MSGPACK)
        self.started = 0.0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.decoder.receive_data(data)
        for message in self.decoder:
            if message["type"] == "hello":
                self.transport.write(encode({"type": "welcome", "protocol": 1, "bot": "b",  # type: ignore[attr-defined]
                                             "server": "baseline"}, Encoding.MSGPACK))
                self.started = time.perf_counter()
                self.transport.write(self.request)  # type: ignore[attr-defined]
            elif message["type"] == "action":
                self.trips -= 1
                if self.trips == 0:
                    self.done.set_result(time.perf_counter() - self.started)
                    self.transport.write(encode({"type": "match_end", "match": "m",  # type: ignore[attr-defined]
                                                 "result": {}, "reveal": []}, Encoding.MSGPACK))
                else:
                    self.transport.write(self.request)  # type: ignore[attr-defined]


async def measure_baseline(trips: int) -> tuple[float, float]:
    """(round trips per second, server CPU µs per round trip)."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[float] = loop.create_future()
    server = await loop.create_server(lambda: Baseline(trips, done), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    cpu0 = time.process_time()
    bots = await spawn_bots(port, 1, 1)
    elapsed = await done
    cpu = time.process_time() - cpu0
    await bots.wait()
    server.close()
    return trips / elapsed, cpu / trips * 1e6


async def measure_arena(matches: int, db: str,
                        tables: int = 1) -> tuple[float, int, float, float]:
    """(decisions per second, decisions, matches per second, server CPU µs
    per decision) for ``tables`` × 5 instant bots playing ``matches`` each;
    the CPU figure includes the storage thread."""
    store = SqliteStore(db)
    config = ServerConfig(port=0, http_port=None, db=db, open=True, house_wait_s=None,
                          decision_ms=30_000, bank_ms=0, max_connections=tables * 5 + 10,
                          max_connections_per_address=tables * 5 + 10)
    server = ArenaServer(config, store)
    await server.start()
    assert server.port is not None
    t0 = time.perf_counter()
    cpu0 = time.process_time()
    bots = await spawn_bots(server.port, tables * 5, matches)
    await bots.wait()
    elapsed = time.perf_counter() - t0
    cpu = time.process_time() - cpu0
    decisions = server.metrics.decisions_total
    finished = server.metrics.matches_finished_total
    await server.stop()
    store.close()
    return decisions / elapsed, decisions, finished / elapsed, cpu / decisions * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--matches", type=int, default=10)
    parser.add_argument("--baseline-trips", type=int, default=20000)
    parser.add_argument("--loop", choices=("asyncio", "uvloop"), default="asyncio",
                        help="event loop of the server, the baseline and the bots")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON line")
    args = parser.parse_args()
    use_event_loop(args.loop)
    logging.disable(logging.CRITICAL)
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.CRITICAL))
    with tempfile.TemporaryDirectory() as tmp:
        base, base_cpu = asyncio.run(measure_baseline(args.baseline_trips))
        rate, decisions, mps, cpu = asyncio.run(
            measure_arena(args.matches, str(Path(tmp) / "b.db")))
    if args.json:
        print(json.dumps({"bare_rate": base, "bare_cpu_us": base_cpu, "rate": rate,
                          "cpu_us": cpu, "ratio_cpu": cpu / base_cpu, "ratio_wall": base / rate,
                          "decisions": decisions}))
        return
    print(f"{'measure':<38}{'per second':>12}{'wall µs':>10}{'server CPU µs':>15}")
    print(f"{'bare asyncio round trip (baseline)':<38}{base:>12,.0f}{1e6 / base:>10.1f}"
          f"{base_cpu:>15.1f}")
    print(f"{'arena decision, 1 table, 5 bots':<38}{rate:>12,.0f}{1e6 / rate:>10.1f}{cpu:>15.1f}")
    print(f"{'arena matches':<38}{mps:>12,.2f}")
    print(f"ratio, wall time per decision / per bare round trip: {base / rate:.2f}")
    print(f"ratio, server CPU per decision / per bare round trip: {cpu / base_cpu:.2f}"
          f"  [target ≤ 1.5]  ({decisions} decisions)")


if __name__ == "__main__":
    main()
