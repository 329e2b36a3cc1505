"""Thirteen cards: hand evaluation speed, the default arranger's time per
deal, and (optionally) the strong house bot against random arrangers.

Evaluation: the same random 5-card hands, each evaluated one at a time from
a Python loop, by

* our table evaluator (``arena.games.thirteen.evaluator``),
* treys (pure Python, prime-product tables): ``Evaluator._five`` (its
  5-card core) and the public ``Evaluator.evaluate`` (2 + 3 cards),
* eval7 (Cython): ``eval7.evaluate``,

measured in the same run, interleaved, best of ``--repeat`` (CPU time of
the process: other jobs on the machine disturb the figures less). treys and
eval7 are bench extras (``pip install -e '.[bench]'``); a missing one is
reported and skipped. The ordering of our strengths is checked against
treys' on the same hands.

    python bench/thirteen_bench.py [--hands 300000] [--repeat 3] [--deals 200] [--versus 1000]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arena.games.thirteen import ThirteenEngine  # noqa: E402
from arena.games.thirteen.arranger import N_SPLITS, best_arrangement  # noqa: E402
from arena.games.thirteen.bots import make_random, make_strong  # noqa: E402
from arena.games.thirteen.cards import CARD_STR, DECK  # noqa: E402
from arena.games.thirteen.evaluator import CARD_KEY, eval3, five_card_evaluator  # noqa: E402

TARGET = 3_000_000  # five-card evaluations per second, one core


def timed(run: Callable[[], None], n: int) -> float:
    start = time.process_time()
    run()
    return n / max(time.process_time() - start, 1e-9)


def evaluators(hands: list[list[int]]) -> dict[str, Callable[[], None]]:
    ours = [tuple(CARD_KEY[c] for c in h) for h in hands]
    eval5 = five_card_evaluator("lowest")

    def run_ours() -> None:
        for h in ours:
            eval5(h)

    runs: dict[str, Callable[[], None]] = {"ours (table)": run_ours}
    strs = [[CARD_STR[c][0] + CARD_STR[c][1].lower() for c in h] for h in hands]
    try:
        from treys import Card, Evaluator
    except ImportError:
        print("treys not installed (pip install -e '.[bench]'): skipped")
    else:
        tv = Evaluator()
        tcards = [[Card.new(s) for s in h] for h in strs]
        five = tv._five
        evaluate = tv.evaluate

        def run_treys_five() -> None:
            for h in tcards:
                five(h)

        def run_treys_evaluate() -> None:
            for h in tcards:
                evaluate(h[:2], h[2:])

        runs["treys _five"] = run_treys_five
        runs["treys evaluate"] = run_treys_evaluate
    try:
        import eval7
    except ImportError:
        print("eval7 not installed (pip install -e '.[bench]'): skipped")
    else:
        ecards = [[eval7.Card(s) for s in h] for h in strs]
        e7 = eval7.evaluate

        def run_eval7() -> None:
            for h in ecards:
                e7(h)

        runs["eval7 evaluate"] = run_eval7
    return runs


def check_against_treys(hands: list[list[int]]) -> str:
    """Our order of strengths must be treys' order (lower treys = stronger)."""
    try:
        from treys import Card, Evaluator
    except ImportError:
        return "not checked (treys missing)"
    tv = Evaluator()
    eval5 = five_card_evaluator("lowest")
    ours, theirs = [], []
    for h in hands:
        ours.append(eval5(tuple(CARD_KEY[c] for c in h)))
        theirs.append(-tv._five([Card.new(CARD_STR[c][0] + CARD_STR[c][1].lower()) for c in h]))
    order_ours = sorted(range(len(hands)), key=lambda i: (ours[i], i))
    rank_ours = {v: k for k, v in enumerate(sorted(set(ours)))}
    rank_theirs = {v: k for k, v in enumerate(sorted(set(theirs)))}
    same = all(rank_ours[ours[i]] == rank_theirs[theirs[i]] for i in order_ours)
    return f"same order as treys on {len(hands):,} hands" if same else "ORDER DIFFERS FROM TREYS"


def bench_eval(args: argparse.Namespace) -> None:
    rng = random.Random(args.seed)
    hands = [rng.sample(DECK, 5) for _ in range(args.hands)]
    runs = evaluators(hands)
    best: dict[str, float] = {name: 0.0 for name in runs}
    for _ in range(args.repeat):
        for name, run in runs.items():
            best[name] = max(best[name], timed(run, len(hands)))
    print(f"five-card evaluations, one hand per call, {len(hands):,} hands, best of {args.repeat}:")
    for name, rate in best.items():
        print(f"  {name:<16} {rate / 1e6:6.2f} M/s")
    ours = best["ours (table)"]
    others = {k: v for k, v in best.items() if k != "ours (table)"}
    verdict = "meets" if ours >= TARGET else "BELOW"
    print(f"  target {TARGET / 1e6:.1f} M/s: {verdict}" + "".join(f"; {ours / v:.2f}x {k}" for k, v in others.items()))
    threes = [tuple(CARD_KEY[c] for c in h[:3]) for h in hands]

    def run3() -> None:
        for h in threes:
            eval3(h)

    print(f"  three-card fronts {timed(run3, len(threes)) / 1e6:6.2f} M/s")
    print(f"  check: {check_against_treys(hands[:20000])}")


def bench_arranger(args: argparse.Namespace) -> None:
    rng = random.Random(args.seed + 1)
    best_arrangement(rng.sample(DECK, 13))  # warm the objective's tables
    times = []
    for _ in range(args.deals):
        hand = rng.sample(DECK, 13)
        start = time.process_time()
        best_arrangement(hand)
        times.append(time.process_time() - start)
    times.sort()
    p95 = times[int(0.95 * (len(times) - 1))]
    print(
        f"default arranger (search over the {N_SPLITS:,} splits), {len(times)} hands: "
        f"mean {statistics.fmean(times) * 1e3:.1f} ms, p95 {p95 * 1e3:.1f} ms, max {times[-1] * 1e3:.1f} ms"
    )


def bench_versus(args: argparse.Namespace) -> None:
    """The strong house bot in seat 0 against three random arrangers."""
    e = ThirteenEngine({"deals": args.versus, "players": 4}, random.Random(args.seed + 2))
    e.start()
    bots = [make_strong(random.Random(0))] + [make_random(random.Random(s)) for s in (1, 2, 3)]
    pair_sum = [0, 0, 0, 0]
    while not e.finished:
        for s in e.to_act:
            events = e.play_for(s, bots[s]("arrange", e.request_for(s)["constraints"], e.observation(s)))
            for ev in events:
                if ev.kind == "showdown":
                    for j in range(4):
                        pair_sum[j] += ev.pairs[0][j]
    result = e.result()
    deals = args.versus
    per_deal = [s[0] for s in result["deal_scores"]]
    won = sum(1 for v in per_deal if v > 0)
    print(
        f"strong vs 3 random over {deals} deals: strong {result['totals'][0]:+d} points "
        f"({result['totals'][0] / deals:+.2f} per deal, {pair_sum[1] / deals:+.2f} per deal per opponent, "
        f"positive in {won / deals:.0%} of deals); random seats {result['totals'][1:]}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hands", type=int, default=300_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--deals", type=int, default=200, help="hands timed for the default arranger")
    parser.add_argument("--versus", type=int, default=0, help="deals of strong vs random (0: skip)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    bench_eval(args)
    bench_arranger(args)
    if args.versus:
        bench_versus(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
