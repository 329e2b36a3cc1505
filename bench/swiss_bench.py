"""How close does a Swiss tournament's final order come to a long round robin's?

    .venv/bin/python bench/swiss_bench.py [--bots 40] [--seeds 5] [--rounds 5 7 10 15]

Simulated bots, the arena's own Swiss pairing (arena/tournament/swiss.py):
each of ``--bots`` bots has a hidden skill drawn from N(0, 1). A table of
five is played in duplicate: five matches on the same decks, the players
rotated one seat each time. The decks give each seat a luck drawn once per
deck set, N(0, DECK_LUCK), the same for every rotation (and, in a Swiss
round, for every table of the round, which all play the same decks); each
player's showing in a match is skill + the seat's luck + N(0, NOISE). The
places of the five showings give the points (4 for first ... 0 for last),
summed into the standings as stars are.

For each seed it plays the full round robin -- every one of C(40, 5) =
658,008 tables, in duplicate -- and Swiss tournaments of each ``--rounds``,
and prints Kendall's tau between each Swiss final order and the round
robin's, and between each and the hidden skill order. As a yardstick of the
same size, "random tables" plays the same number of rounds with the tables
drawn at random each round (Swiss without the standings).
"""

from __future__ import annotations

import argparse
import itertools
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arena.tournament.swiss import met_counts, pair_round, repeats, standing_order  # noqa: E402

SEATS = 5
DECK_LUCK = 1.0
NOISE = 1.5
POINTS = (4, 3, 2, 1, 0)


def kendall_tau(a: Sequence[str], b: Sequence[str]) -> float:
    """Kendall's tau-a of two total orders of the same names (no ties: the
    standings break theirs), from concordant minus discordant pairs."""
    pos = {name: i for i, name in enumerate(b)}
    ranks = [pos[name] for name in a]
    n = len(ranks)
    concordant = sum(1 for i, j in itertools.combinations(range(n), 2) if ranks[i] < ranks[j])
    pairs = n * (n - 1) // 2
    return (2 * concordant - pairs) / pairs


def play_table(players: Sequence[int], skill: Sequence[float], luck: Sequence[float],
               points: list[int], rng: random.Random) -> None:
    """The duplicate rotations of one table, points added to ``points``."""
    gauss = rng.gauss
    for r in range(SEATS):
        showing = sorted(((skill[players[(s + r) % SEATS]] + luck[s] + gauss(0.0, NOISE),
                           players[(s + r) % SEATS]) for s in range(SEATS)), reverse=True)
        for place, (_, p) in enumerate(showing):
            points[p] += POINTS[place]


def order_of(points: Sequence[int], rng: random.Random) -> list[int]:
    """Standings order: most points first, ties by a draw."""
    draw = [rng.random() for _ in points]
    return sorted(range(len(points)), key=lambda p: (-points[p], draw[p]))


def round_robin(skill: Sequence[float], rng: random.Random) -> list[int]:
    points = [0] * len(skill)
    for players in itertools.combinations(range(len(skill)), SEATS):
        luck = [rng.gauss(0.0, DECK_LUCK) for _ in range(SEATS)]
        play_table(players, skill, luck, points, rng)
    return order_of(points, rng)


def swiss(skill: Sequence[float], rounds: int, rng: random.Random, *,
          paired: bool = True) -> tuple[list[int], int]:
    """(final order, repeated table-mates) of a Swiss tournament, or of
    random tables each round when ``paired`` is false."""
    n = len(skill)
    names = [f"b{i:03d}" for i in range(n)]
    index = {name: i for i, name in enumerate(names)}
    points = [0] * n
    played: list[list[str]] = []
    repeated = 0
    for number in range(1, rounds + 1):
        met = met_counts(played)
        if paired:
            figures = {names[i]: {"stars": points[i], "sums": 0} for i in range(n)}
            order = standing_order(names, figures, game="muushig", seed=rng.randrange(2**31),
                                   number=number)
            tables = pair_round(order, seats=SEATS, met=met)
        else:
            shuffled = rng.sample(names, n)
            tables = [tuple(shuffled[i:i + SEATS]) for i in range(0, n, SEATS)]
        repeated += repeats(tables, met)
        luck = [rng.gauss(0.0, DECK_LUCK) for _ in range(SEATS)]  # one deck set a round
        for table in tables:
            play_table([index[p] for p in table], skill, luck, points, rng)
        played += [list(t) for t in tables]
    return order_of(points, rng), repeated


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bots", type=int, default=40)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--rounds", type=int, nargs="+", default=[5, 7, 10, 15])
    args = parser.parse_args()
    if args.bots % SEATS:
        raise SystemExit(f"--bots must be a multiple of {SEATS} (no house bots here)")
    results: dict[tuple[str, int], list[tuple[float, float, int]]] = {}
    rr_truth = []
    for seed in range(args.seeds):
        rng = random.Random(seed)
        skill = [rng.gauss(0.0, 1.0) for _ in range(args.bots)]
        truth = sorted(range(args.bots), key=lambda p: -skill[p])
        started = time.perf_counter()
        rr = round_robin(skill, rng)
        rr_s = time.perf_counter() - started
        rr_truth.append(kendall_tau([str(p) for p in rr], [str(p) for p in truth]))
        print(f"seed {seed}: round robin of {args.bots} bots played in {rr_s:.0f} s, "
              f"tau vs skill {rr_truth[-1]:.3f}", flush=True)
        for rounds in args.rounds:
            for kind, paired in (("swiss", True), ("random tables", False)):
                order, repeated = swiss(skill, rounds, rng, paired=paired)
                as_text = [str(p) for p in order]
                results.setdefault((kind, rounds), []).append(
                    (kendall_tau(as_text, [str(p) for p in rr]),
                     kendall_tau(as_text, [str(p) for p in truth]), repeated))
    matches_rr = sum(1 for _ in itertools.combinations(range(args.bots), SEATS)) * SEATS
    print(f"\n{args.bots} bots, {args.seeds} seeds; the round robin: {matches_rr:,} matches, "
          f"tau vs skill {statistics.fmean(rr_truth):.3f} (min {min(rr_truth):.3f})")
    print("| schedule | rounds | matches | tau vs round robin (mean, min-max) "
          "| tau vs skill (mean) | repeated table-mates per round |")
    print("|---|---|---|---|---|---|")
    for (kind, rounds), rows in sorted(results.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        taus = [r[0] for r in rows]
        print(f"| {kind} | {rounds} | {rounds * args.bots:,} | {statistics.fmean(taus):.3f} "
              f"({min(taus):.3f}-{max(taus):.3f}) | {statistics.fmean(r[1] for r in rows):.3f} "
              f"| {statistics.fmean(r[2] for r in rows) / rounds:.1f} |")


if __name__ == "__main__":
    main()
