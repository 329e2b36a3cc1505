"""What anonymous web visitors cost the tables.

    python bench/web_load_bench.py [--tables 200] [--matches 1] [--prefill 5000]
                                   [--visitors 50] [--interval 1.0] [--repeat 1]

A store is first filled with ``--prefill`` finished matches of 1,000 bots
(the state in which one standings request once held the loop 4.6 s). Then,
on a copy of it each time, ``--tables`` x 5 instant bots (``fastbot.py``, one
separate process, the same names as the stored bots) play ``--matches``
matches each through an arena server with its web server on:

* quiet: nobody visits the web;
* web load: ``--visitors`` anonymous visitors (another process) each fetch a
  page or an API answer, wait ``--interval`` seconds, and again: standings,
  bot pages and their JSON, match lists, match pages, health -- a mix that
  makes the server compute standings, bot statistics and match details.

Printed: decisions per second both ways and their ratio (target: the web
load costs the tables under 10 %), and what the visitors got (requests per
second, statuses, median and 95th percentile latency). ``--repeat`` runs
the pair several times, alternating, since the 2-core machine drifts.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import random
import shutil
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import structlog

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from arena.server.config import ServerConfig  # noqa: E402
from arena.app import Arena, http_port_of  # noqa: E402
from arena.storage.base import MatchRecord, MatchStatus, SeatFaults  # noqa: E402
from arena.storage.sqlite import SqliteStore  # noqa: E402
from server_bench import spawn_bots  # noqa: E402

N_BOTS = 1000  # fastbot.py names its connections fast0, fast1, ...


# -- the stored past ------------------------------------------------------------
def prefill(path: Path, matches: int, seed: int = 0) -> None:
    """Finished five-seat matches among ``N_BOTS`` bots, with a latency per
    decision as real ones have (~230 a seat)."""
    rng = random.Random(seed)
    store = SqliteStore(path)
    names = [f"fast{i}" for i in range(N_BOTS)]
    for name in names:
        store.ensure_bot(name)
    start = time.time() - matches - 60
    for i in range(matches):
        match_id = f"pre-{i:06d}"
        store.create_match(MatchRecord(id=match_id, game="muushig",
                                       players=rng.sample(names, 5), rules={}, limits={},
                                       status=MatchStatus.RUNNING, started_at=start + i))
        stars = [0] * 5
        for _ in range(5):
            stars[rng.randrange(5)] += 1
        sums = [rng.randrange(0, 40) for _ in range(5)]
        order = sorted(range(5), key=lambda s: (-stars[s], sums[s]))
        ranks = [0] * 5
        for place, s in enumerate(order):
            ranks[s] = place + 1
        store.finish_match(
            match_id, result={"stars": stars, "final_scores": [[v] for v in sums],
                              "sums": sums, "ranks": ranks},
            reveal=[], faults=[SeatFaults()] * 5,
            latency_ms=[[round(rng.random(), 3) for _ in range(230)] for _ in range(5)],
            finished_at=start + i + 30)
    store.close()


# -- the visitors (a separate process) ----------------------------------------------
def visitor_paths(rng: random.Random, prefilled: int) -> str:
    bot = f"fast{rng.randrange(N_BOTS)}"
    match = f"pre-{rng.randrange(max(1, prefilled)):06d}"
    return rng.choice([
        "/", "/api/standings", "/api/standings?scope=all", "/partials/standings?scope=ladder",
        f"/bots/{bot}", f"/api/bots/{bot}", f"/api/matches?offset={rng.randrange(500)}",
        "/matches", f"/api/matches/{match}", f"/matches/{match}", "/api/tournaments",
        "/api/health", "/api/matches/live", f"/api/matches?bot={bot}",
    ])


async def visit(base: str, visitors: int, interval: float, prefilled: int) -> dict[str, Any]:
    import aiohttp

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    loop.add_reader(sys.stdin.fileno(), stop.set)  # any line (or EOF) on stdin stops
    latencies: list[float] = []
    statuses: dict[str, int] = {}
    t0 = time.perf_counter()

    async def one(index: int, session: aiohttp.ClientSession) -> None:
        rng = random.Random(index)
        await asyncio.sleep(rng.random() * interval)  # spread the first requests
        while not stop.is_set():
            path = visitor_paths(rng, prefilled)
            began = time.perf_counter()
            try:
                async with session.get(base + path) as response:
                    await response.read()
                    key = str(response.status)
            except aiohttp.ClientError as exc:
                key = type(exc).__name__
            latencies.append(time.perf_counter() - began)
            statuses[key] = statuses.get(key, 0) + 1
            try:
                await asyncio.wait_for(stop.wait(), interval)
            except TimeoutError:
                pass

    connector = aiohttp.TCPConnector(limit=visitors)
    async with aiohttp.ClientSession(connector=connector) as session:
        await asyncio.gather(*[one(i, session) for i in range(visitors)])
    elapsed = time.perf_counter() - t0
    latencies.sort()
    return {"requests": len(latencies), "per_s": len(latencies) / elapsed, "statuses": statuses,
            "median_ms": 1000 * statistics.median(latencies) if latencies else None,
            "p95_ms": 1000 * latencies[int(0.95 * (len(latencies) - 1))] if latencies else None,
            "max_ms": 1000 * latencies[-1] if latencies else None}


# -- one run ---------------------------------------------------------------------------
async def warm_up(base: str) -> None:
    """The crowd is there before the bots come, and the server has computed
    its standings once, as a server that has been up a while has."""
    import aiohttp

    async with aiohttp.ClientSession() as session:
        for path in ("/api/standings", "/api/standings?scope=all", "/"):
            async with session.get(base + path, timeout=aiohttp.ClientTimeout(600)) as r:
                await r.read()



async def play(db: Path, tables: int, matches: int, load: tuple[int, float, int] | None
               ) -> tuple[float, int, dict[str, Any] | None]:
    """(decisions per second, decisions, what the visitors saw)."""
    store = SqliteStore(db)
    config = ServerConfig(port=0, http_port=0, db=str(db), open=True, house_wait_s=None,
                          decision_ms=30_000, bank_ms=0, max_connections=tables * 5 + 10)
    server = Arena(config, store).server  # with the web app on http_port
    await server.start()
    visitors = None
    if load is not None:
        n, interval, prefilled = load
        visitors = await asyncio.create_subprocess_exec(
            sys.executable, __file__, "--visit", f"http://127.0.0.1:{http_port_of(server)}",
            "--visitors", str(n), "--interval", str(interval), "--prefill", str(prefilled),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
        await warm_up(f"http://127.0.0.1:{http_port_of(server)}")
    assert server.port is not None
    t0 = time.perf_counter()
    bots = await spawn_bots(server.port, tables * 5, matches)
    await bots.wait()
    elapsed = time.perf_counter() - t0
    decisions = server.metrics.decisions_total
    seen = None
    if visitors is not None:
        assert visitors.stdin is not None
        visitors.stdin.write(b"stop\n")
        await visitors.stdin.drain()
        out, _ = await visitors.communicate()
        seen = json.loads(out.decode().strip().splitlines()[-1])
    await server.stop()
    store.close()
    return decisions / elapsed, decisions, seen


def quiet_logs() -> None:
    logging.disable(logging.CRITICAL)
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.CRITICAL))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", type=int, default=200)
    parser.add_argument("--matches", type=int, default=1)
    parser.add_argument("--prefill", type=int, default=5000)
    parser.add_argument("--visitors", type=int, default=50)
    parser.add_argument("--interval", type=float, default=1.0,
                        help="seconds each visitor waits between two requests")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--visit", default=None, help=argparse.SUPPRESS)  # visitor process
    args = parser.parse_args()
    quiet_logs()
    if args.visit:
        print(json.dumps(asyncio.run(visit(args.visit, args.visitors, args.interval,
                                           args.prefill))), flush=True)
        return
    with tempfile.TemporaryDirectory() as tmp:
        filled = Path(tmp) / "filled.db"
        t0 = time.perf_counter()
        prefill(filled, args.prefill)
        print(f"store: {args.prefill} finished matches of {N_BOTS} bots "
              f"({time.perf_counter() - t0:.0f} s to write)")
        quiet_rates, load_rates = [], []
        for r in range(args.repeat):
            for loaded in (False, True):
                db = Path(tmp) / f"run-{r}-{int(loaded)}.db"
                shutil.copy(filled, db)
                load = (args.visitors, args.interval, args.prefill) if loaded else None
                rate, decisions, seen = asyncio.run(play(db, args.tables, args.matches, load))
                (load_rates if loaded else quiet_rates).append(rate)
                label = "web load" if loaded else "quiet"
                print(f"{label:<9} {rate:>9,.0f} decisions/s ({decisions} decisions)")
                if seen is not None:
                    print(f"          visitors: {seen['per_s']:.1f} requests/s, statuses "
                          f"{seen['statuses']}, median {seen['median_ms']:.0f} ms, "
                          f"p95 {seen['p95_ms']:.0f} ms, max {seen['max_ms']:.0f} ms")
                for suffix in ("", "-wal", "-shm"):
                    Path(str(db) + suffix).unlink(missing_ok=True)
    quiet, loaded = statistics.median(quiet_rates), statistics.median(load_rates)
    print(f"{args.tables} tables, {args.visitors} visitors every {args.interval:g} s: "
          f"quiet {quiet:,.0f}/s, under web load {loaded:,.0f}/s, ratio {loaded / quiet:.2f} "
          f"(web load costs {100 * (1 - loaded / quiet):.1f} %; target < 10 %)")


if __name__ == "__main__":
    main()
