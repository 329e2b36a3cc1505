"""Muushig engine speed: full matches of random legal play.

Runs, in the same process and on the same seeds:

* the engine's fast API (``legal_codes`` / ``apply_code``, small ints), every
  event kept in a log (wire dicts are built lazily, so not here);
* the engine's wire API (``legal_actions`` / ``apply``, protocol strings);
* the plain reference implementation of the tests, as the baseline.

Each line reports decisions per second and matches per second (best of
``--repeat`` runs: other processes share the cores), then the ratio of the
fast API to the baseline.

    python bench/engine_bench.py [--matches 200] [--repeat 3] [--seed 0]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arena.games.muushig import MuushigEngine  # noqa: E402
from tests.games.muushig.reference import ReferenceMatch  # noqa: E402

TARGET = 250_000  # decisions per second, one core


def fast_api(seeds: range) -> int:
    decisions = 0
    for seed in seeds:
        engine = MuushigEngine(None, random.Random(seed))
        choice = random.Random(seed + 1).choice
        log = engine.start()
        legal_codes, apply_code = engine.legal_codes, engine.apply_code
        while engine.current_seat is not None:
            log += apply_code(choice(legal_codes()))
            decisions += 1
    return decisions


def wire_api(seeds: range) -> int:
    decisions = 0
    for seed in seeds:
        engine = MuushigEngine(None, random.Random(seed))
        choice = random.Random(seed + 1).choice
        log = engine.start()
        while not engine.finished:
            log += engine.play(choice(engine.legal_actions()))
            decisions += 1
    return decisions


def shuffled_decks(rng: random.Random) -> Iterator[list[str]]:
    """The same decks the engine deals from this rng, made on demand."""
    while True:
        deck = [r + s for s in "HSDC" for r in "789TJQKA"]
        rng.shuffle(deck)
        yield deck


def reference(seeds: range) -> int:
    decisions = 0
    for seed in seeds:
        choice = random.Random(seed + 1).choice
        match = ReferenceMatch(shuffled_decks(random.Random(seed)))
        while match.pending is not None:
            match.act(choice(match.pending[2]))
            decisions += 1
    return decisions


def measure(run: Callable[[range], int], seeds: range, repeat: int) -> tuple[float, float]:
    best = (0.0, 0.0)
    for _ in range(repeat):
        t0 = time.process_time()  # CPU time: other processes share the cores
        decisions = run(seeds)
        dt = time.process_time() - t0
        best = max(best, (decisions / dt, len(seeds) / dt))
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=200, help="matches per run (engine)")
    parser.add_argument("--baseline-matches", type=int, default=20, help="matches per run (reference)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per line; the best is shown")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    seeds = range(args.seed, args.seed + args.matches)
    rows = [
        ("engine, fast API (codes)", measure(fast_api, seeds, args.repeat)),
        ("engine, wire API (strings)", measure(wire_api, seeds, args.repeat)),
        ("reference (baseline)", measure(reference, range(args.seed, args.seed + args.baseline_matches), args.repeat)),
    ]
    for name, (dps, mps) in rows:
        print(f"{name:<28} {dps:>12,.0f} decisions/s {mps:>10,.1f} matches/s")
    fast, base = rows[0][1][0], rows[2][1][0]
    print(f"fast API / reference: {fast / base:.1f}x; target {TARGET:,} decisions/s: "
          f"{'met' if fast >= TARGET else 'NOT met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
