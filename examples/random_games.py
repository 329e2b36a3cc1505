"""Play 1,000 random games in a learning environment and print the rate.

Trains nothing: each agent picks uniformly among the actions its mask
allows. Needs the rl extra (``pip install -e '.[rl]'``).

    python examples/random_games.py [--game muushig|thirteen] [--games 1000] [--seed 0]
"""

from __future__ import annotations

import argparse
import random
import time

import numpy as np

from arena.envs import muushig, thirteen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", choices=["muushig", "thirteen"], default="muushig")
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    env = muushig.env(seed=args.seed) if args.game == "muushig" else thirteen.env(seed=args.seed)
    choice = random.Random(args.seed).choice
    steps = 0
    rewards: dict[str, float] = {}
    start = time.perf_counter()
    for _ in range(args.games):
        env.reset()
        for agent in env.agent_iter():
            observation, reward, terminated, truncated, _ = env.last()
            rewards[agent] = rewards.get(agent, 0.0) + reward
            if terminated or truncated:
                env.step(None)
                continue
            env.step(int(choice(np.flatnonzero(observation["action_mask"]))))
            steps += 1
    seconds = time.perf_counter() - start
    print(f"{args.games} {args.game} games, {steps:,} steps in {seconds:.1f} s: "
          f"{args.games / seconds:.1f} games/s, {steps / seconds:,.0f} steps/s")
    print("rewards summed per agent:", {a: round(r, 1) for a, r in sorted(rewards.items())})


if __name__ == "__main__":
    main()
