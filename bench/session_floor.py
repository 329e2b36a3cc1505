"""What a decision costs the server before any socket, store or hub work.

    python bench/session_floor.py [--matches 40] [--repeat 3]

Plays whole Muushig matches through :class:`MatchSession` alone (sans-IO:
five remote seats on msgpack, a fake clock) and times only the server's
side of each decision: ``session.answer`` -- the checks, the engine, the
events, every seat's encoded bytes, the store records -- and taking its
output the way the table does. Picking the answer (the engine's legal
actions, a random choice) is the bot's work and is not timed.

Printed beside it, from the same run: the engine alone on the same seeds
(its wire API, ``legal_actions`` / ``apply``, and the fast code API), so
the figure reads as "the session costs N engine decisions". This is the
floor under the 200-table figure of ``outside_bench.py``: that one adds the
kernel's socket work, asyncio's transports, the store writer and the live
hub on top of it.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, os.environ.get("BENCH_CODE") or str(Path(__file__).resolve().parent.parent))

from arena.games import get_game  # noqa: E402
from arena.games.muushig import MuushigEngine  # noqa: E402
from arena.pure import compiled_modules  # noqa: E402
from arena.server.seats import Seat, SeatKind  # noqa: E402
from arena.server.session import MatchSession, TimeLimits  # noqa: E402
from protocol.codec import Encoding  # noqa: E402

MUUSHIG = get_game("muushig")


def _never(phase: str, options: object, state: dict) -> object:
    raise AssertionError("every seat is remote: no house move is asked for")


def take_output(session: MatchSession) -> None:
    """What the table takes from the session after each step (here: dropped)."""
    session.step()


def session_match(seed: int) -> tuple[int, int]:
    """One match; returns (decisions, nanoseconds spent in the session)."""
    engine = MUUSHIG.new_match({}, random.Random(seed), None)
    seats = [Seat(index=i, name=f"b{i}", kind=SeatKind.REMOTE, house=_never, token_hash=f"t{i}")
             for i in range(engine.n_seats)]
    session = MatchSession(match_id=f"m{seed}", game="muushig", engine=engine, seats=seats,
                           limits=TimeLimits(1000, 0, 3),
                           encodings=[Encoding.MSGPACK] * engine.n_seats)
    choice = random.Random(seed + 1).choice
    clock = time.perf_counter_ns
    now = 0.0
    session.start(now)
    take_output(session)
    pending = session._pending
    decisions = spent = 0
    while not session.over:
        seat_index, request = next(iter(pending.items()))
        action = choice(engine.legal_actions())
        now += 0.001
        t0 = clock()
        session.answer(seat_index, request.id, action, now)
        take_output(session)
        spent += clock() - t0
        decisions += 1
    return decisions, spent


def engine_match(seed: int, fast: bool) -> tuple[int, int]:
    engine = MuushigEngine(None, random.Random(seed))
    choice = random.Random(seed + 1).choice
    clock = time.perf_counter_ns
    engine.start()
    decisions = spent = 0
    while not engine.finished:
        if fast:
            code = choice(engine.legal_codes())
            t0 = clock()
            engine.apply_code(code)
        else:
            action = choice(engine.legal_actions())
            t0 = clock()
            engine.play(action)
        spent += clock() - t0
        decisions += 1
    return decisions, spent


def best_us(run, seeds: range, repeat: int) -> float:  # type: ignore[no-untyped-def]
    best = float("inf")
    for _ in range(repeat):
        decisions = spent = 0
        for seed in seeds:
            d, s = run(seed)
            decisions += d
            spent += s
        best = min(best, spent / decisions / 1000)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=40)
    parser.add_argument("--repeat", type=int, default=3, help="runs per row; the best is shown")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON line")
    args = parser.parse_args(argv)
    seeds = range(args.matches)
    session = best_us(session_match, seeds, args.repeat)
    wire = best_us(lambda s: engine_match(s, False), seeds, args.repeat)
    fast = best_us(lambda s: engine_match(s, True), seeds, args.repeat)
    if args.json:
        print(json.dumps({"session_us": session, "engine_wire_us": wire, "engine_fast_us": fast,
                          "compiled": len(compiled_modules())}))
        return 0
    print(f"compiled modules: {len(compiled_modules())}")
    print(f"{'µs per decision (best of runs)':<44} {'this':>8} {'baseline':>9} {'ratio':>6}")
    print(f"{'session.answer vs engine wire apply':<44} {session:>8.2f} {wire:>9.2f} "
          f"{session / wire:>6.2f}")
    print(f"{'session.answer vs engine fast apply_code':<44} {session:>8.2f} {fast:>9.2f} "
          f"{session / fast:>6.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
