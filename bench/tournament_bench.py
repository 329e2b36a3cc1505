"""A whole tournament with one process against the same with N workers.

    python bench/tournament_bench.py [--file examples/demo.toml] [--workers 2] [--repeats 3]

Runs ``arena tournament FILE`` (no web, a fresh store in a temporary
folder each time, free ports) with ``--workers 1`` (the baseline: one
process plays the schedule) and with ``--workers N``, alternately, so a
drift of the machine's speed hits both alike. Prints the medians (min-max)
of the wall time of the whole command (start-up and bots included), the
CPU of its process tree (the arena, its workers and every bot, from the
children's rusage) and matches per second, side by side with their ratio.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def one_run(path: Path, workers: int) -> tuple[float, float, int]:
    """(wall s, CPU s of the process tree, finished matches)."""
    with tempfile.TemporaryDirectory(prefix="arena-tournament-bench-") as folder:
        db = Path(folder) / "t.db"
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "arena.cli", "tournament", str(path),
                               "--db", str(db), "--port", "0", "--no-http",
                               "--no-keep-serving", "--workers", str(workers)],
                              cwd=ROOT, capture_output=True, text=True)
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0:
            raise SystemExit(f"arena tournament --workers {workers} failed:\n"
                             f"{done.stderr[-2000:]}")
        sys.path.insert(0, str(ROOT))
        from arena.storage.sqlite import SqliteStore

        store = SqliteStore(db)
        try:
            (record,) = store.list_tournaments()
            matches = len(store.finished_matches(tournament_id=record.id))
        finally:
            store.close()
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, matches


def cell(values: list[float], digits: int = 2) -> str:
    return (f"{statistics.median(values):.{digits}f} "
            f"({min(values):.{digits}f}-{max(values):.{digits}f})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", type=Path, default=ROOT / "examples" / "demo.toml")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    runs: dict[int, list[tuple[float, float, int]]] = {1: [], args.workers: []}
    for _ in range(args.repeats):
        for workers in runs:
            runs[workers].append(one_run(args.file.resolve(), workers))
    base, new = runs[1], runs[args.workers]
    rows = [("wall s, whole command", [r[0] for r in base], [r[0] for r in new]),
            ("CPU s, arena + workers + bots", [r[1] for r in base], [r[1] for r in new]),
            ("matches per second (wall)", [r[2] / r[0] for r in base],
             [r[2] / r[0] for r in new])]
    print(f"{args.file.name}: {base[0][2]} matches; medians (min-max) of {args.repeats} "
          "interleaved runs")
    print(f"{'figure':32} {'--workers 1':>20} {f'--workers {args.workers}':>20} {'ratio':>7}")
    for name, b, n in rows:
        print(f"{name:32} {cell(b):>20} {cell(n):>20} "
              f"{statistics.median(n) / statistics.median(b):7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
