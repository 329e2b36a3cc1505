"""Base against new, in the same run: one table of medians.

    python bench/compare.py --base DIR [--repeats 3] [--tables 200] [--matches 3]

``DIR`` is another checkout of the code (e.g. ``git worktree add DIR
<commit>``). The benchmarks of THIS checkout run against both trees,
alternately (base, new, new with ``--gc-freeze``: the collector as ``arena
serve`` sets it; base, ...), so a drift of
the machine's speed hits both sides alike; the medians of ``--repeats``
runs are printed. Figures: the in-process server at ``--tables`` tables
(server CPU per decision, the fake bots counted apart; storage thread; RSS
per table) and the one-table loopback run (server CPU per decision and its
ratio to a bare asyncio round trip measured in the same process).

    python bench/compare.py --outside --base DIR [--repeats 3] [--tables 200] [--workers N]

``--outside`` compares instead ``outside_bench.py`` runs (the real server as
a subprocess, measured from /proc, beside a bare asyncio server process),
base and new alternately; medians with the spread (min-max) of the runs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def run(script: str, code: Path, extra: list[str]) -> dict[str, float]:
    env = dict(os.environ, BENCH_CODE=str(code), PYTHONPATH=str(code))
    out = subprocess.run([sys.executable, str(HERE / script), "--json", *extra], env=env,
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--base", type=Path, required=True)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--tables", type=int, default=200)
    parser.add_argument("--matches", type=int, default=3, help="server_bench matches")
    parser.add_argument("--skip-server", action="store_true")
    parser.add_argument("--no-gc-variant", action="store_true",
                        help="leave out the run with the serving collector")
    parser.add_argument("--outside", action="store_true",
                        help="compare outside_bench.py runs (server as a subprocess) instead")
    parser.add_argument("--outside-matches", type=int, default=1,
                        help="with --outside: matches per connection")
    parser.add_argument("--workers", type=int, help="with --outside: arena serve --workers N")
    args = parser.parse_args()
    if args.outside:
        compare_outside(args)
        return
    new = HERE.parent
    variants = [("base", args.base, []), ("new", new, []), ("new+gc", new, ["--gc-freeze"])]
    if args.no_gc_variant:
        variants.pop()
    inproc: dict[str, list[dict[str, float]]] = {name: [] for name, _, _ in variants}
    server: dict[str, list[dict[str, float]]] = {"base": [], "new": []}
    for r in range(args.repeats):
        for name, code, extra in variants:
            fig = run("inproc_bench.py", code, ["--tables", str(args.tables), *extra])
            inproc[name].append(fig)
            print(f"run {r} inproc {name}: {json.dumps(fig)}", file=sys.stderr, flush=True)
        if not args.skip_server:
            for name, code in (("base", args.base), ("new", new)):
                fig = run("server_bench.py", code, ["--matches", str(args.matches)])
                server[name].append(fig)
                print(f"run {r} server {name}: {json.dumps(fig)}", file=sys.stderr, flush=True)

    def med(figs: list[dict[str, float]], key: str) -> str:
        if not figs or key not in figs[0]:
            return "-"
        return f"{statistics.median(f[key] for f in figs):.1f}"

    names = [name for name, _, _ in variants]
    print(f"medians of {args.repeats} interleaved runs")
    print(f"{'figure':<58}" + "".join(f"{n:>10}" for n in names))
    rows = [
        (f"in-process {args.tables} tables: server CPU µs/decision", "server_us"),
        ("  of it loop thread (fake bots apart)", "server_loop_us"),
        ("  of it storage thread", "writer_us"),
        ("  fake bots (not server; for reference)", "bots_us"),
        ("  RSS KB per table (peak while playing)", "rss_per_table_kb"),
        ("  turn latency p50 ms (request out to answer handled)", "p50_ms"),
        ("  turn latency p99 ms [< 50]", "p99_ms"),
        ("  bare engine µs/decision (same run)", "engine_us"),
        ("  garbage collector CPU µs/decision (loop thread)", "gc_us"),
        ("  its longest collection, ms", "gc_longest_ms"),
    ]
    for figs in inproc.values():
        for f in figs:  # the machine's speed drifts: the bare engine in the same run is the yardstick
            f["server_per_engine"] = f["server_us"] / f["engine_us"]
    rows.append(("  server CPU / bare engine (drift-normalised)", "server_per_engine"))
    for label, key in rows:
        print(f"{label:<58}" + "".join(f"{med(inproc[n], key):>10}" for n in names))
    if not args.skip_server:
        for label, key in (("1 table loopback: server CPU µs/decision", "cpu_us"),
                           ("  bare asyncio round trip CPU µs (same run)", "bare_cpu_us"),
                           ("  ratio server CPU / bare round trip [≤ 1.5]", "ratio_cpu")):
            print(f"{label:<58}" + "".join(f"{med(server.get(n, []), key):>10}" for n in names))


# (figure, key path in outside_bench's JSON, target)
OUTSIDE_ROWS = [
    ("server CPU µs/decision, {tables} tables", ("arena", "server_us"), "≤ 50"),
    ("  bare asyncio server CPU µs/round trip (same run)", ("bare", "server_us"), ""),
    ("  ratio to the bare round trip", ("ratio_cpu",), ""),
    ("turn latency p50 ms", ("arena", "p50_ms"), ""),
    ("turn latency p99 ms", ("arena", "p99_ms"), "< 50"),
    ("  bare p99 ms (same run)", ("bare", "p99_ms"), ""),
    ("RSS KB per table (peak - before)", ("arena", "rss_per_table_kb"), "< 200"),
    ("server-caused timeouts", ("arena", "timeouts"), "0"),
    ("load generator CPU µs/decision (not server)", ("arena", "load_us"), ""),
    ("decisions/s (wall)", ("arena", "rate"), ""),
    ("1 table, server_bench: server CPU µs/decision", ("one_table", "cpu_us"), ""),
    ("  its bare round trip CPU µs", ("one_table", "bare_cpu_us"), ""),
    ("  ratio [≤ 1.5]", ("one_table", "ratio_cpu"), "≤ 1.5"),
]


def _get(fig: dict, path: tuple[str, ...]) -> float | None:
    for key in path:
        if not isinstance(fig, dict) or key not in fig:
            return None
        fig = fig[key]
    return fig  # type: ignore[return-value]


def _num(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 100 or float(value).is_integer() else f"{value:.1f}"


def _spread(values: list[float]) -> str:
    if not values:
        return "-"
    med = _num(statistics.median(values))
    if len(values) == 1:
        return med
    return f"{med} ({_num(min(values))}-{_num(max(values))})"


def compare_outside(args: argparse.Namespace) -> None:
    """Base and new from outside, alternately; medians and the spread."""
    new = HERE.parent
    extra = ["--tables", str(args.tables), "--matches", str(args.outside_matches),
             "--one-table-matches", str(0 if args.skip_server else args.matches)]
    if args.workers is not None:
        extra += ["--workers", str(args.workers)]
    figs: dict[str, list[dict]] = {"base": [], "new": []}
    for r in range(args.repeats):
        for name, code in (("base", args.base), ("new", new)):
            fig = run("outside_bench.py", code, extra)
            figs[name].append(fig)
            print(f"run {r} outside {name}: {json.dumps(fig)}", file=sys.stderr, flush=True)
    for name, runs in figs.items():
        for note in {f["workers_note"] for f in runs if "workers_note" in f}:
            print(f"note ({name}): {note}")
    print(f"outside_bench: medians (min-max) of {args.repeats} interleaved runs")
    print(f"{'figure':<50}{'target':>8}{'base':>22}{'new':>22}")
    for label, path, target in OUTSIDE_ROWS:
        cells = []
        for name in ("base", "new"):
            values = [v for v in (_get(f, path) for f in figs[name]) if v is not None]
            cells.append(_spread(values))
        print(f"{label.format(tables=args.tables):<50}{target:>8}{cells[0]:>22}{cells[1]:>22}")


if __name__ == "__main__":
    main()
