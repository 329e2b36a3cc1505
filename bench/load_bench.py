"""Many tables at once: total decisions per second through one server.

    python bench/load_bench.py [--tables 200] [--matches 1]

``--tables`` × 5 instant bots (``fastbot.py``, one separate process) connect
to an arena server in this process; the lobby seats them as they arrive and
each connection plays ``--matches`` matches. Beside it, in the same run, the
baseline: a bare asyncio server holding as many concurrent request/response
streams as there are tables (one request in flight per stream, like a
table), answered by the same bot process. Printed: total decisions (or round
trips) per second for both, and their ratio. The design target is 200
tables and 1,000 connections at ≥ 20,000 decisions per second.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import tempfile
import time
from pathlib import Path

import structlog

sys.path.insert(0, str(Path(__file__).resolve().parent))

from server_bench import Baseline, measure_arena, spawn_bots, use_event_loop  # noqa: E402


async def measure_baseline(streams: int, trips: int) -> float:
    loop = asyncio.get_running_loop()
    dones: list[asyncio.Future[float]] = []

    def factory() -> Baseline:
        done: asyncio.Future[float] = loop.create_future()
        dones.append(done)
        return Baseline(trips, done)

    server = await loop.create_server(factory, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    t0 = time.perf_counter()
    bots = await spawn_bots(port, streams, 1)
    await bots.wait()
    elapsed = time.perf_counter() - t0
    server.close()
    return streams * trips / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tables", type=int, default=200)
    parser.add_argument("--matches", type=int, default=1)
    parser.add_argument("--baseline-trips", type=int, default=200)
    parser.add_argument("--loop", choices=("asyncio", "uvloop"), default="asyncio",
                        help="event loop of the server, the baseline and the bots")
    args = parser.parse_args()
    use_event_loop(args.loop)
    logging.disable(logging.CRITICAL)
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.CRITICAL))
    with tempfile.TemporaryDirectory() as tmp:
        base = asyncio.run(measure_baseline(args.tables, args.baseline_trips))
        rate, decisions, _, cpu_us = asyncio.run(
            measure_arena(args.matches, str(Path(tmp) / "load.db"), tables=args.tables))
    print(f"{'measure':<46}{'per second':>12}")
    print(f"{f'bare asyncio, {args.tables} concurrent streams (baseline)':<46}{base:>12,.0f}")
    print(f"{f'arena, {args.tables} tables, {args.tables * 5} connections':<46}{rate:>12,.0f}")
    print(f"ratio arena / baseline: {rate / base:.2f}; server CPU per decision {cpu_us:.0f} µs; "
          f"{decisions} decisions  [design target ≥ 20,000 decisions/s]")


if __name__ == "__main__":
    main()
