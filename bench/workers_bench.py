"""Server CPU per decision and decisions per second with 1 and N bot workers.

``--tables`` × 5 instant bots (``fastbot.py``, in ``--bot-procs`` separate
processes) play against the arena of ``arena serve``: with ``--workers 1``
one process (today's), with more the parent (this process: web off, the
director off) and its worker processes. The server's CPU is every server
process's user + system time from ``/proc`` (this process and each worker),
summed, over a window of ``--seconds`` once every table plays; decisions
are the summed counters of the same processes (the workers report every
half second, so both ends of the window lag alike).

    python bench/workers_bench.py --tables 200 --workers 1 2
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

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from arena.app import Arena  # noqa: E402
from arena.server.config import ServerConfig  # noqa: E402
from arena.storage import open_store  # noqa: E402
from proctree import process_cpu_s as cpu_s  # noqa: E402 - bench/, beside this script


async def spawn_bots(port: int, n: int, procs: int) -> list[asyncio.subprocess.Process]:
    env = {**os.environ, "PYTHONPATH": str(HERE.parent)}
    out = []
    for k in range(procs):
        share = n // procs + (1 if k < n % procs else 0)
        # Bots of process k are numbered apart (fastbot names them by index).
        out.append(await asyncio.create_subprocess_exec(
            sys.executable, "-c",
            "import sys, asyncio; sys.argv=['fastbot']; sys.path.insert(0, 'bench');"
            "import fastbot\n"
            f"async def main():\n"
            f"    loop = asyncio.get_running_loop(); dones = []\n"
            f"    for i in range({k * 100_000}, {k * 100_000 + share}):\n"
            f"        d = loop.create_future()\n"
            f"        await loop.create_connection(lambda i=i, d=d: fastbot.FastBot(i, 10**6, d),"
            f" '127.0.0.1', {port})\n"
            f"        dones.append(d)\n"
            f"    await asyncio.gather(*dones)\n"
            f"asyncio.run(main())\n",
            cwd=str(HERE.parent), env=env))
    return out


def config_for(tables: int, db: str) -> ServerConfig:
    n = tables * 5 + 50
    return ServerConfig(port=0, http_port=None, db=db, open=True, house_wait_s=2.0,
                        decision_ms=30_000, bank_ms=0, max_connections=n,
                        max_connections_per_address=n, max_connections_per_token=n)


async def measure(workers: int, tables: int, seconds: float, bot_procs: int,
                  db: str) -> dict[str, float]:
    config = config_for(tables, db)
    store = open_store(db)
    if workers == 1:
        arena = Arena(config, store)
        metrics = arena.server.metrics
        pids = lambda: ["self"]  # noqa: E731
    else:
        from arena.app_workers import WorkersArena

        def own_arena(own, hub, metrics, bot_port):
            return Arena(own, store, hub=hub, metrics=metrics, bot_port=bot_port)
        arena = WorkersArena(config, store, workers, own_arena, log_level="error")
        metrics = arena.metrics
        pids = lambda: ["self", *(w.pid for w in arena.pool.workers)]  # noqa: E731
    await arena.start()
    bots = await spawn_bots(arena.port, tables * 5, bot_procs)
    try:
        deadline = time.monotonic() + 60
        while metrics.snapshot()["tables_running"] < tables * 0.98:
            assert time.monotonic() < deadline, "the tables did not fill"
            await asyncio.sleep(0.2)
        await asyncio.sleep(1.0)
        p0, c0, d0, t0 = cpu_s("self"), sum(cpu_s(p) for p in pids()), \
            metrics.snapshot()["decisions_total"], time.monotonic()
        await asyncio.sleep(seconds)
        p1, c1, d1, t1 = cpu_s("self"), sum(cpu_s(p) for p in pids()), \
            metrics.snapshot()["decisions_total"], time.monotonic()
        snap = metrics.snapshot()
    finally:
        for bot in bots:
            bot.kill()
            await bot.wait()
        await arena.stop()
        store.close()
    decisions = d1 - d0
    return {"workers": workers, "tables": snap["tables_running"],
            "decisions_per_s": decisions / (t1 - t0),
            "server_cpu_us_per_decision": (c1 - c0) / decisions * 1e6,
            "parent_cpu_us_per_decision": (p1 - p0) / decisions * 1e6,
            "server_cores_busy": (c1 - c0) / (t1 - t0), "decisions": decisions}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tables", type=int, default=200)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--bot-procs", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    logging.disable(logging.CRITICAL)
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.CRITICAL))
    rows = []
    for workers in args.workers:
        with tempfile.TemporaryDirectory() as tmp:
            rows.append(asyncio.run(measure(workers, args.tables, args.seconds, args.bot_procs,
                                            str(Path(tmp) / "bench.db"))))
    if args.json:
        print(json.dumps(rows))
        return
    print(f"{'workers':>8}{'tables':>8}{'decisions/s':>13}{'server CPU µs/dec':>19}"
          f"{'of it, parent':>15}{'server cores':>14}")
    for r in rows:
        print(f"{r['workers']:>8}{r['tables']:>8}{r['decisions_per_s']:>13,.0f}"
              f"{r['server_cpu_us_per_decision']:>19.1f}"
              f"{r['parent_cpu_us_per_decision'] if r['workers'] > 1 else float('nan'):>15.1f}"
              f"{r['server_cores_busy']:>14.2f}")


if __name__ == "__main__":
    main()
