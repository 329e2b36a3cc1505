"""The arena server measured from outside, at many tables, with its baselines.

    python bench/outside_bench.py [--tables 200] [--matches 1] [--workers N] [--code DIR] [--json]

The real server runs as a subprocess (``arena serve``, open mode, a fresh
store in a temporary directory, free ports on 127.0.0.1, the default
decision time); the load generator (``spread_bots.py``: ``fastbot.py``'s
instant bots from many loopback addresses) is another process with
``--tables`` × 5 connections, each leaving after ``--matches`` matches.
Everything the server costs is read from /proc, not from the server:

- server CPU per decision: user + system time of the server's process tree
  (workers and their waited-for children included) from just before the
  bots connect to when the store shows no match running, over the
  decisions in the store (answered ones, from the per-decision latencies,
  plus timeouts);
- turn latency p50/p99: the stored per-decision latencies (request out to
  answer handled);
- RSS per table: the peak of the tree's summed RSS while playing (sampled
  every 0.1 s) minus the RSS before, over the tables;
- server-caused timeouts: the timeouts in the matches' faults (the bots
  answer at once, so any timeout is the server's);
- the load generator's own CPU, apart (its rusage when it exits).

Baselines, measured in the same run and the same way: a bare asyncio
server subprocess (``bare_server.py``) holding the same connections in
tables of five, one request in flight per table, answered by the same
load generator (its CPU per round trip); and, for the one-table target,
``server_bench.py``'s one-table run against its bare round trip.

``--code DIR`` (or ``BENCH_CODE=DIR``) runs another checkout's server with
this benchmark, so ``compare.py --outside`` can set base and new side by
side. ``--workers N`` is passed to ``arena serve`` when the measured tree
has that option.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from contextlib import closing
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bare_server import percentiles  # noqa: E402
from proctree import RssPeak, tree_cpu_s, tree_rss_bytes  # noqa: E402

HERE = Path(__file__).resolve().parent
SEATS = 5
# Runs `arena serve` of whatever tree PYTHONPATH names, on this interpreter,
# so base and new differ only in their code. -P: the working directory is
# not put first on the path (it may be a checkout too).
_ARENA = ["-P", "-c", "import sys; from arena.cli import main; sys.exit(main(sys.argv[1:]))"]


class BenchError(RuntimeError):
    """A benchmark process failed or never got ready."""


@dataclass
class LoadRun:
    """What the load generator cost, and how long it played."""

    wall_s: float
    cpu_s: float


@dataclass
class ArenaFigures:
    tables: int
    connections: int
    workers: int | None
    decisions: int  # the server's /metrics count, else answers + timeouts in the store
    answered: int  # answers in the store (one latency each)
    matches_finished: int
    matches_aborted: int
    server_cpu_s: float
    server_us: float  # server CPU per decision
    load_us: float  # the load generator's CPU per decision
    rate: float  # decisions per second, wall
    p50_ms: float
    p99_ms: float
    rss_per_table_kb: float
    timeouts: int
    autopilot_seats: int


@dataclass
class BareFigures:
    tables: int
    trips: int
    server_us: float  # CPU per round trip
    load_us: float
    rate: float
    p50_ms: float
    p99_ms: float
    rss_per_table_kb: float


def child_env(code: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "BENCH_CODE")}
    env["PYTHONPATH"] = str(code)
    return env


def serve_has_workers(code: Path) -> bool:
    out = subprocess.run([sys.executable, *_ARENA, "serve", "--help"], env=child_env(code),
                         capture_output=True, text=True, check=True).stdout
    return "--workers" in out


def arena_location(code: Path) -> Path:
    """Where the server's ``arena`` package is imported from, given ``code``."""
    out = subprocess.run([sys.executable, "-P", "-c", "import arena; print(arena.__file__)"],
                         env=child_env(code), capture_output=True, text=True, check=True).stdout
    return Path(out.strip()).resolve().parent.parent


def wait_line(proc: subprocess.Popen[str], prefix: str, timeout_s: float) -> str:
    """The first stdout line of ``proc`` starting with ``prefix``; the rest of
    its stdout is drained in a thread so the process never blocks on it."""
    found: list[str] = []
    ready = threading.Event()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            if not found and line.startswith(prefix):
                found.append(line.strip())
                ready.set()
        ready.set()

    threading.Thread(target=read, daemon=True).start()
    if not ready.wait(timeout_s) or not found:
        proc.kill()
        raise BenchError(f"{proc.args[:3]}... printed no {prefix!r} line within {timeout_s:.0f} s "
                         f"(exit code {proc.poll()})")
    return found[0]


def run_load(port: int, bots: int, matches: int, timeout_s: float) -> LoadRun:
    """Runs the load generator to its end; its CPU from its rusage."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, str(HERE / "spread_bots.py"), str(port), str(bots),
                             str(matches)], env=child_env(HERE.parent), cwd=str(HERE.parent))
    deadline = time.monotonic() + timeout_s
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() > deadline:
            proc.kill()
            os.wait4(proc.pid, 0)
            raise BenchError(f"the load generator did not finish within {timeout_s:.0f} s")
        time.sleep(0.05)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise BenchError(f"the load generator exited with {proc.returncode}")
    return LoadRun(time.perf_counter() - t0, usage.ru_utime + usage.ru_stime)


def stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _match_counts(db: Path) -> tuple[int, int] | None:
    """(finished, running) matches in the store, None if it cannot be read yet."""
    try:
        with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1)) as conn:
            rows = dict(conn.execute("SELECT status, count(*) FROM matches GROUP BY status"))
    except sqlite3.Error:
        return None
    return rows.get("finished", 0), rows.get("running", 0)


def settle(pid: int, db: Path, finished: int, timeout_s: float = 30.0) -> None:
    """Waits until the store holds the ``finished`` matches played (or none
    is running) and the server is quiet, its last writes done, so the CPU
    read next holds all of the run's work. (After a match the lobby seats
    its bots again before their ``bye`` arrives: those matches are aborted
    only after the server's abandon grace, seconds later, and cost the
    server next to nothing meanwhile.)"""
    deadline = time.monotonic() + timeout_s
    last = tree_cpu_s(pid)
    while time.monotonic() < deadline:
        time.sleep(0.2)
        now = tree_cpu_s(pid)
        counts = _match_counts(db)
        if counts is not None and (counts[0] >= finished or counts[1] == 0) and now - last < 0.02:
            return
        last = now


def metrics_decisions(http_port: int) -> int | None:
    """``arena_decisions_total`` from the server's /metrics (every decision it
    settled, autopiloted seats' too), None if it does not answer."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{http_port}/metrics", timeout=10) as reply:
            text = reply.read().decode()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("arena_decisions_total "):
            return int(float(line.split()[1]))
    return None


def store_figures(db: Path) -> dict[str, float]:
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        rows = conn.execute("SELECT status, faults, latency_ms FROM matches").fetchall()
    latencies: list[float] = []
    timeouts = autopilot = finished = aborted = 0
    for status, faults, latency in rows:
        finished += status == "finished"
        aborted += status == "aborted"
        for seat in json.loads(faults or "[]"):
            timeouts += seat["timeouts"]
            # (the seats of matches begun as the bots left are on autopilot: not counted)
            autopilot += status == "finished" and bool(seat["autopilot"])
        for seat in json.loads(latency or "[]"):
            latencies += seat
    p50, p99 = percentiles(latencies)  # as the bare server counts its own
    return {"answered": len(latencies), "timeouts": timeouts, "autopilot": autopilot,
            "finished": finished, "aborted": aborted, "p50_ms": p50, "p99_ms": p99}


def ports_of(line: str) -> tuple[int, int | None]:
    """(bots' port, web port or None) from arena serve's start-up line."""
    bots = re.search(r"bots connect to [^\s,]*:(\d+)", line)
    if bots is None:
        raise BenchError(f"no port in arena serve's start-up line {line!r}")
    web = re.search(r"web on http://[^\s,/]*:(\d+)", line)
    return int(bots.group(1)), int(web.group(1)) if web else None


def measure_arena(code: Path, tables: int, matches: int, workers: int | None,
                  log_level: str, tmp: Path) -> ArenaFigures:
    db = tmp / "outside.db"
    command = [sys.executable, *_ARENA, "serve", "--log-level", log_level, "--any-token",
               "--port", "0", "--http-port", "0", "--db", str(db)]
    if workers is not None:
        command += ["--workers", str(workers)]
    with open(tmp / "server.log", "w") as log:
        server = subprocess.Popen(command, env=child_env(code), cwd=str(tmp), text=True,
                                  stdout=subprocess.PIPE, stderr=log)
    try:
        line = wait_line(server, "arena: bots connect to", 60)
        port, http_port = ports_of(line)
        time.sleep(0.3)  # background start-up work done
        rss0 = tree_rss_bytes(server.pid)
        peak = RssPeak(server.pid).start()
        cpu0 = tree_cpu_s(server.pid)
        load = run_load(port, tables * SEATS, matches, timeout_s=600)
        settle(server.pid, db, finished=tables * matches)
        cpu = tree_cpu_s(server.pid) - cpu0
        rss = peak.stop() - rss0
        counted = metrics_decisions(http_port) if http_port else None
    finally:
        stop(server)
    if server.returncode not in (0, -signal.SIGTERM):
        raise BenchError(f"arena serve exited with {server.returncode}; see its log: "
                         f"{(tmp / 'server.log').read_text()[-2000:]}")
    store = store_figures(db)
    answered = int(store["answered"])
    # The server's count holds the decisions of seats on autopilot too, which
    # the store's latencies (one per answer) do not.
    decisions = counted if counted is not None else answered + int(store["timeouts"])
    if decisions == 0:
        raise BenchError("no decisions in the store: did the bots get seated?")
    return ArenaFigures(
        tables=tables, connections=tables * SEATS, workers=workers, decisions=decisions,
        answered=answered,
        matches_finished=int(store["finished"]), matches_aborted=int(store["aborted"]),
        server_cpu_s=cpu, server_us=cpu / decisions * 1e6, load_us=load.cpu_s / decisions * 1e6,
        rate=decisions / load.wall_s, p50_ms=store["p50_ms"], p99_ms=store["p99_ms"],
        rss_per_table_kb=rss / tables / 1024, timeouts=int(store["timeouts"]),
        autopilot_seats=int(store["autopilot"]))


def measure_bare(tables: int, trips: int) -> BareFigures:
    server = subprocess.Popen([sys.executable, str(HERE / "bare_server.py"), str(trips)],
                              env=child_env(HERE.parent), text=True, stdout=subprocess.PIPE)
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        if not line.startswith("ready "):
            raise BenchError(f"the bare server did not start (printed {line!r})")
        port = int(line.split()[1])
        time.sleep(0.1)
        rss0 = tree_rss_bytes(server.pid)
        peak = RssPeak(server.pid).start()
        cpu0 = tree_cpu_s(server.pid)
        load = run_load(port, tables * SEATS, 1, timeout_s=600)
        cpu = tree_cpu_s(server.pid) - cpu0
        rss = peak.stop() - rss0
        server.send_signal(signal.SIGTERM)
        out, _ = server.communicate(timeout=30)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    figures = json.loads(out.strip().splitlines()[-1])
    done = figures["trips"]
    return BareFigures(tables=tables, trips=done, server_us=cpu / done * 1e6,
                       load_us=load.cpu_s / done * 1e6, rate=done / load.wall_s,
                       p50_ms=figures["p50_ms"], p99_ms=figures["p99_ms"],
                       rss_per_table_kb=rss / tables / 1024)


def bench_json(script: str, code: Path, matches: int) -> dict[str, float]:
    """Another benchmark of this folder run for the measured tree: its
    ``--json`` line. ``server_bench.py``: the one-table run (server in its
    process, the bare round trip beside it); ``session_floor.py``: the match
    session alone, no I/O, and the engine alone, µs per decision."""
    out = subprocess.run([sys.executable, str(HERE / script), "--json",
                          "--matches", str(matches)], env=child_env(code), cwd=str(HERE.parent),
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def figures_dict(arena: ArenaFigures, bare: BareFigures, one: dict[str, float] | None,
                 code: Path, workers_note: str | None,
                 floor: dict[str, float] | None = None) -> dict[str, object]:
    result: dict[str, object] = {
        "code": str(code), "arena": asdict(arena), "bare": asdict(bare),
        # A tiny run's baseline can use less CPU than one clock tick: no ratio then.
        "ratio_cpu": arena.server_us / bare.server_us if bare.server_us else None,
        "load_average": os.getloadavg()[0]}
    if one is not None:
        result["one_table"] = one
    if floor is not None:
        result["floor"] = floor
    if workers_note:
        result["workers_note"] = workers_note
    return result


def rows(fig: dict[str, object]) -> list[tuple[str, str, float | None, float | None]]:
    """(figure, target, this run, baseline) for the printed table."""
    a, b = fig["arena"], fig["bare"]
    assert isinstance(a, dict) and isinstance(b, dict)
    n = f"{a['tables']} table{'s' if a['tables'] != 1 else ''} / {a['connections']} connections"
    out = [
        (f"server CPU µs per decision, {n}", "≤ 50", a["server_us"], b["server_us"]),
        ("turn latency p50 ms", "", a["p50_ms"], b["p50_ms"]),
        ("turn latency p99 ms", "< 50", a["p99_ms"], b["p99_ms"]),
        ("RSS KB per table (peak while playing − before)", "< 200", a["rss_per_table_kb"],
         b["rss_per_table_kb"]),
        ("server-caused timeouts", "0", a["timeouts"], 0),
        ("load generator CPU µs per decision (not the server)", "", a["load_us"], b["load_us"]),
        ("decisions per second (wall)", "", a["rate"], b["rate"]),
        ("decisions (baseline: round trips)", "", a["decisions"], b["trips"]),
    ]
    one = fig.get("one_table")
    if isinstance(one, dict):
        out.append(("one table, server_bench: server CPU µs per decision", "ratio ≤ 1.5",
                    one["cpu_us"], one["bare_cpu_us"]))
    floor = fig.get("floor")
    if isinstance(floor, dict):
        # What no change outside the session can go below: the session's own
        # work plus what asyncio and the kernel take for a bare round trip.
        out.append(("the match session alone, no I/O (baseline: the engine)", "",
                    floor["session_us"], floor["engine_wire_us"]))
        out.append(("floor: the session alone + the bare round trip", "≤ 50",
                    floor["session_us"] + b["server_us"], b["server_us"]))
    return out


def _cell(value: float | None) -> str:
    if value is None:
        return "-"
    if isinstance(value, int) or abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.1f}"


def print_table(fig: dict[str, object]) -> None:
    a = fig["arena"]
    assert isinstance(a, dict)
    print(f"arena serve from {fig['code']}: {a['tables']} table(s), {a['connections']} connections, "
          f"{a['matches_finished']} matches finished, {a['matches_aborted']} aborted, "
          f"workers {a['workers'] or '-'}; load average {fig['load_average']:.1f}")
    if a["autopilot_seats"]:
        print(f"note: {a['autopilot_seats']} seats of finished matches were on autopilot "
              f"(bots seated again after their last match): {a['decisions'] - a['answered']:,} "
              "decisions no bot answered")
    if fig.get("workers_note"):
        print(f"note: {fig['workers_note']}")
    print(f"{'figure':<54}{'target':>12}{'this run':>11}{'baseline':>11}{'ratio':>8}")
    for label, target, value, base in rows(fig):
        ratio = f"{value / base:.2f}" if value is not None and base else "-"
        print(f"{label:<54}{target:>12}{_cell(value):>11}{_cell(base):>11}{ratio:>8}")
    print("baseline: a bare asyncio server process with the same connections, tables of five, "
          "one request in flight per table (CPU per round trip); the one-table row's is "
          "server_bench's bare round trip")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", type=int, default=200)
    parser.add_argument("--matches", type=int, default=1, help="matches per connection")
    parser.add_argument("--workers", type=int, help="passed to arena serve, if it has --workers")
    parser.add_argument("--code", type=Path, default=os.environ.get("BENCH_CODE") or HERE.parent,
                        help="checkout whose server is measured (default: BENCH_CODE or this one)")
    parser.add_argument("--baseline-trips", type=int, default=1000,
                        help="round trips per bare table and match (an arena match is ~1,150)")
    parser.add_argument("--one-table-matches", type=int, default=3,
                        help="server_bench matches for the one-table row (0: leave it out)")
    parser.add_argument("--floor-matches", type=int, default=20,
                        help="session_floor matches for the floor rows (0: leave them out)")
    parser.add_argument("--log-level", default="warning", choices=("debug", "info", "warning", "error"),
                        help="arena serve's log level (its log goes to a file)")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON line")
    args = parser.parse_args(argv)
    code = args.code.resolve()
    if arena_location(code) != code:
        raise SystemExit(f"{code} has no arena package: --code names a checkout of this project")
    workers, note = args.workers, None
    if workers is not None and not serve_has_workers(code):
        workers, note = None, f"arena serve in {code} has no --workers: measured as one process"
    bare = measure_bare(args.tables, args.baseline_trips * args.matches)
    with tempfile.TemporaryDirectory() as tmp:
        arena = measure_arena(code, args.tables, args.matches, workers, args.log_level, Path(tmp))
    one = (bench_json("server_bench.py", code, args.one_table_matches)
           if args.one_table_matches else None)
    floor = bench_json("session_floor.py", code, args.floor_matches) if args.floor_matches else None
    fig = figures_dict(arena, bare, one, code, note, floor)
    if args.json:
        print(json.dumps(fig))
    else:
        print_table(fig)
    return 0


if __name__ == "__main__":
    sys.exit(main())
