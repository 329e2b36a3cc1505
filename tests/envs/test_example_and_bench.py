"""The example and the bench of the environments run as documented."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pettingzoo", reason="the rl extra: pip install -e '.[rl]'")

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str) -> str:
    done = subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("game, games", [("muushig", 5), ("thirteen", 1)])
def test_the_example_plays_random_games_and_prints_the_rate(game, games):
    out = _run("examples/random_games.py", "--game", game, "--games", str(games))
    assert re.search(rf"^{games} {game} games, [\d,]+ steps in [\d.]+ s: [\d.]+ games/s, [\d,]+ steps/s$",
                     out, re.MULTILINE), out


def test_the_bench_prints_a_rate_per_line():
    out = _run("bench/env_bench.py", "--matches", "2", "--repeat", "1")
    assert "muushig PettingZoo env" in out and "thirteen PettingZoo env" in out
    assert "muushig vector_env, 64 tables" in out and "inside step() alone, 16 tables" in out
