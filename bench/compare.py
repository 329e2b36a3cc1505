"""Base against new, in the same run: one table of medians.

    python bench/compare.py --base DIR [--repeats 3] [--tables 200] [--matches 3]

``DIR`` is another checkout of the code (e.g. ``git worktree add DIR
<commit>``). The benchmarks of THIS checkout run against both trees,
alternately (base, new, new with ``--gc-freeze``, base, ...), so a drift of
the machine's speed hits both sides alike; the medians of ``--repeats``
runs are printed. Figures: the in-process server at ``--tables`` tables
(server CPU per decision, the fake bots counted apart; storage thread; RSS
per table) and the one-table loopback run (server CPU per decision and its
ratio to a bare asyncio round trip measured in the same process).
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
                        help="leave out the run with gc.freeze")
    args = parser.parse_args()
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


if __name__ == "__main__":
    main()
