"""Instructions per decision: the server's work counted, not timed.

    python bench/instructions.py [--base DIR] [--small 2] [--large 8]

Runs ``inproc_bench.py`` under valgrind's callgrind twice, with ``--small``
and ``--large`` tables (one match each), and divides the difference in
instructions by the difference in decisions: interpreter start, imports and
the engine yardstick cancel out, what is left is the instructions one
decision costs (the server's work plus the in-process fake bots', which are
the same code for base and new). The count does not drift with the load of
the machine the way CPU time does, so a change of 2 % is visible on a busy
machine. With ``--base DIR`` (another checkout, e.g. made with ``git
worktree add DIR <commit>``) the same is measured for that tree and both are
printed side by side with their ratio. Needs ``valgrind`` (Debian package).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
_COLLECTED = re.compile(r"Collected\s*:\s*(\d+)")


def count(code: Path, tables: int) -> tuple[int, int]:
    """(instructions, decisions) of one in-process run over ``tables``."""
    env = {**os.environ, "BENCH_CODE": str(code), "PYTHONPATH": str(code),
           "PYTHONHASHSEED": "0"}
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/cg.out",
             sys.executable, str(HERE / "inproc_bench.py"), "--tables", str(tables),
             "--matches", "1", "--json"],
            capture_output=True, text=True, env=env, check=True)
    found = _COLLECTED.search(proc.stderr)
    if found is None:
        raise SystemExit(f"callgrind printed no instruction count:\n{proc.stderr[-2000:]}")
    figures = json.loads(proc.stdout.strip().splitlines()[-1])
    return int(found.group(1)), int(figures["decisions"])


def per_decision(code: Path, small: int, large: int) -> float:
    ir_small, dec_small = count(code, small)
    ir_large, dec_large = count(code, large)
    return (ir_large - ir_small) / (dec_large - dec_small)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", type=Path, help="another checkout to measure beside this one")
    parser.add_argument("--small", type=int, default=2, help="tables in the smaller run")
    parser.add_argument("--large", type=int, default=8, help="tables in the larger run")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (apt-get install valgrind)")
    new = per_decision(HERE.parent, args.small, args.large)
    if args.base is None:
        print(f"instructions per decision: {new:,.0f}")
        return
    base = per_decision(args.base.resolve(), args.small, args.large)
    print(f"{'instructions per decision':<28}{'base':>12}{'new':>12}{'new/base':>10}")
    print(f"{'in-process server + fake bots':<28}{base:>12,.0f}{new:>12,.0f}{new / base:>10.3f}")


if __name__ == "__main__":
    main()
