"""The learning environments' speed beside RLCard's UNO, in the same run.

Random play over whole matches, one process, CPU time, best of
``--repeat`` runs (other processes share the cores):

* Muushig: the engine's fast API (small ints), its wire API (what the
  server calls), and the PettingZoo environment (``arena.envs.muushig``:
  observation arrays and mask per step, choice among the masked actions);
* RLCard's UNO (``rlcard.make("uno")``), stepped the same way (a random
  legal action each step), when ``rlcard`` is installed (``pip install
  rlcard``; the bench extra has it);
* thirteen: the environment, and its engine with each seat given the
  ``strong`` arrangement (the search an environment runs per hand).

    python bench/env_bench.py [--matches 200] [--repeat 3]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from arena.envs import muushig, thirteen  # noqa: E402
from arena.games.muushig import MuushigEngine  # noqa: E402
from arena.games.thirteen import ThirteenEngine  # noqa: E402


def muushig_fast(matches: int) -> int:
    steps = 0
    for seed in range(matches):
        engine = MuushigEngine(None, random.Random(seed))
        choice = random.Random(seed + 1).choice
        engine.start()
        while engine.current_seat is not None:
            engine.apply_code(choice(engine.legal_codes()))
            steps += 1
    return steps


def muushig_wire(matches: int) -> int:
    steps = 0
    for seed in range(matches):
        engine = MuushigEngine(None, random.Random(seed))
        choice = random.Random(seed + 1).choice
        engine.start()
        while not engine.finished:
            engine.play(choice(engine.legal_actions()))
            steps += 1
    return steps


def run_env(env: object, matches: int) -> int:
    steps = 0
    choice = random.Random(0).choice
    for seed in range(matches):
        env.reset(seed=seed)  # type: ignore[attr-defined]
        for _ in env.agent_iter():  # type: ignore[attr-defined]
            obs, _, terminated, truncated, _ = env.last()  # type: ignore[attr-defined]
            if terminated or truncated:
                env.step(None)  # type: ignore[attr-defined]
                continue
            env.step(int(choice(np.flatnonzero(obs["action_mask"]))))  # type: ignore[attr-defined]
            steps += 1
    return steps


def uno(matches: int) -> int:
    import rlcard

    steps = 0
    for seed in range(matches):
        env = rlcard.make("uno", config={"seed": seed})
        choice = random.Random(seed).choice
        state, _ = env.reset()
        while not env.is_over():
            state, _ = env.step(choice(list(state["legal_actions"])))
            steps += 1
    return steps


def thirteen_engine(matches: int) -> int:
    steps = 0
    for seed in range(matches):
        engine = ThirteenEngine({"deals": 4}, random.Random(seed))
        engine.start()
        while not engine.finished:
            seat = engine.to_act[0]
            engine.play_for(seat, engine.default_for(seat))
            steps += 1
    return steps


def best_rate(run: Callable[[int], int], matches: int, repeat: int) -> tuple[float, float]:
    best = (0.0, 0.0)
    for _ in range(repeat):
        start = time.process_time()  # CPU time: other jobs on the machine disturb it less
        steps = run(matches)
        seconds = time.process_time() - start
        if steps / seconds > best[0]:
            best = (steps / seconds, matches / seconds)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    m, r = args.matches, args.repeat
    rows: list[tuple[str, float, float]] = []
    for name, run, n in [
        ("muushig engine, fast API", muushig_fast, m),
        ("muushig engine, wire API", muushig_wire, m),
        ("muushig PettingZoo env", lambda k: run_env(muushig.raw_env(), k), m),
        ("thirteen engine, 4 deals, strong", thirteen_engine, max(1, m // 20)),
        ("thirteen PettingZoo env, 4 deals", lambda k: run_env(thirteen.raw_env(deals=4), k), max(1, m // 20)),
    ]:
        rows.append((name, *best_rate(run, n, r)))
    try:
        import rlcard  # noqa: F401
    except ImportError:
        print("rlcard is not installed: no UNO line (pip install rlcard)")
    else:
        rows.append(("RLCard UNO (rlcard.make('uno'))", *best_rate(uno, m, r)))
    uno_rate = rows[-1][1] if rows[-1][0].startswith("RLCard") else None
    print(f"{'':36} {'steps/s':>10} {'matches/s':>10} {'vs UNO':>8}")
    for name, steps, per in rows:
        ratio = f"{steps / uno_rate:7.1f}x" if uno_rate else ""
        print(f"{name:36} {steps:10,.0f} {per:10.1f} {ratio:>8}")


if __name__ == "__main__":
    main()
