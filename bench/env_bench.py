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
  ``strong`` arrangement (the search an environment runs per hand);
* the floor: the same loop over a PettingZoo environment that does nothing
  (five agents in turn, one fixed observation, as many steps a match as a
  Muushig match): what the AEC API and the random choice cost alone;
* the Muushig environment again, reading every ``info["events"]`` (the
  per-seat views are made when first read), and as ``muushig.env()`` gives
  it, inside PettingZoo's order-enforcing wrapper;
* the vectorized Muushig environment (``muushig.vector_env``): 16, 64 and
  256 tables stepped per call, a random legal action per table chosen in
  NumPy over the whole mask array; its rate counts table-steps (one
  decision at one table), and a second line counts the time inside
  ``step`` alone (without the caller's choice of actions).

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

from pettingzoo import AECEnv  # noqa: E402

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


def run_env(env: object, matches: int, read_events: bool = False) -> int:
    steps = 0
    choice = random.Random(0).choice
    for seed in range(matches):
        env.reset(seed=seed)  # type: ignore[attr-defined]
        for _ in env.agent_iter():  # type: ignore[attr-defined]
            obs, _, terminated, truncated, info = env.last()  # type: ignore[attr-defined]
            if read_events:
                len(info["events"])
            if terminated or truncated:
                env.step(None)  # type: ignore[attr-defined]
                continue
            env.step(int(choice(np.flatnonzero(obs["action_mask"]))))  # type: ignore[attr-defined]
            steps += 1
    return steps


STEP_ONLY: dict[int, float] = {}  # tables -> best table-steps/s inside step() alone


def run_vector(matches: int, num_envs: int) -> int:
    """Random play at ``num_envs`` tables until ``matches`` matches ended;
    table-steps played (each table's row counts one decision a call)."""
    tables = muushig.vector_env(num_envs, seed=0, copy=False)
    _, mask, _ = tables.reset()
    rng = np.random.default_rng(0)
    first = np.arange(num_envs) * mask.shape[1]  # each row's first flat index
    steps = finished = 0
    inside = 0.0
    clock = time.process_time
    while finished < matches:
        # A uniform legal index per row: the flat indices of all allowed
        # actions, row after row, and in each row's run of them one place
        # drawn below the row's count. The 0/1 mask is read as booleans,
        # which NumPy scans in bulk (int8 entries one call each), through
        # array methods (NumPy's module-level wrappers add Python calls).
        allowed_rows = mask.view(np.bool_)
        allowed = allowed_rows.ravel().nonzero()[0]
        counts = allowed_rows.sum(1)
        last = counts.cumsum() - 1  # each row's last allowed, in ``allowed``
        last -= (rng.random(num_envs) * counts).astype(np.intp)
        actions = allowed[last] - first
        start = clock()
        _, mask, _, _, done = tables.step(actions)
        inside += clock() - start
        steps += num_envs
        finished += np.count_nonzero(done)
    STEP_ONLY[num_envs] = max(STEP_ONLY.get(num_envs, 0.0), steps / inside)
    return steps


class NoopEnv(AECEnv):
    """Five agents in turn, one fixed observation and mask, ``length`` steps
    a match: the PettingZoo bookkeeping an environment cannot avoid."""

    metadata = {"name": "noop_v0"}

    def __init__(self, length: int = 1165) -> None:
        super().__init__()
        self.possible_agents = [f"player_{i}" for i in range(5)]
        self.length = length
        self._obs = {"observation": np.zeros(191, np.float32), "action_mask": np.ones(99, np.int8)}

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self.agent_selection = self.agents[0]
        self._steps = 0

    def observe(self, agent: str) -> dict:
        return self._obs

    def step(self, action: int | None) -> None:
        if self.terminations[self.agent_selection]:
            self._was_dead_step(action)
            return
        self._cumulative_rewards[self.agent_selection] = 0.0
        self._steps += 1
        self.agent_selection = self.agents[self._steps % 5]
        if self._steps >= self.length:
            for agent in self.agents:
                self.terminations[agent] = True
            self._deads_step_first()


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
        ("muushig env, info events read", lambda k: run_env(muushig.raw_env(), k, read_events=True), m),
        ("muushig env() (order-enforcing wrapper)", lambda k: run_env(muushig.env(), k), m),
        ("PettingZoo API floor (no-op env)", lambda k: run_env(NoopEnv(), k), m),
        ("muushig vector_env, 64 tables", lambda k: run_vector(k, 64), m),
        ("muushig vector_env, 16 tables", lambda k: run_vector(k, 16), m),
        ("muushig vector_env, 256 tables", lambda k: run_vector(k, 256), m),
        ("thirteen engine, 4 deals, strong", thirteen_engine, max(1, m // 20)),
        ("thirteen PettingZoo env, 4 deals", lambda k: run_env(thirteen.raw_env(deals=4), k), max(1, m // 20)),
    ]:
        rows.append((name, *best_rate(run, n, r)))
        if name.startswith("muushig vector_env"):
            tables = int(name.split()[2])
            rows.append((f"  inside step() alone, {tables} tables", STEP_ONLY[tables], float("nan")))
    try:
        import rlcard  # noqa: F401
    except ImportError:
        print("rlcard is not installed: no UNO line (pip install rlcard)")
    else:
        rows.append(("RLCard UNO (rlcard.make('uno'))", *best_rate(uno, m, r)))
    uno_rate = rows[-1][1] if rows[-1][0].startswith("RLCard") else None
    fast = rows[0][1]
    print(f"{'':40} {'steps/s':>10} {'matches/s':>10} {'vs UNO':>8} {'vs fast':>8}")
    for name, steps, per in rows:
        ratio = f"{steps / uno_rate:7.1f}x" if uno_rate else ""
        per_match = f"{per:10.1f}" if per == per else f"{'':10}"  # nan: a line without its own matches
        print(f"{name:40} {steps:10,.0f} {per_match} {ratio:>8} {steps / fast:7.0%}")


if __name__ == "__main__":
    main()
