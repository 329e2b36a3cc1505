"""Types are checked: mypy, with the configuration in pyproject.toml (strict
for the match session, the bot connection, the engines and the storage
interface), finds nothing in ``arena`` and ``protocol``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_mypy_finds_no_error(tmp_path: Path) -> None:
    pytest.importorskip("mypy", reason="mypy is in the test extra: pip install -e '.[test]'")
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache")],
        cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_engines_satisfy_the_interface_they_claim(tmp_path: Path) -> None:
    # An assignment to the protocol type fails to type-check if an engine
    # drifts from GameEngine (mypy reports the members that conflict).
    pytest.importorskip("mypy")
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from arena.games.interface import GameEngine\n"
        "from arena.games.muushig.engine import MuushigEngine\n"
        "from arena.games.thirteen.engine import ThirteenEngine\n"
        "def muushig(e: MuushigEngine) -> GameEngine:\n    return e\n"
        "def thirteen(e: ThirteenEngine) -> GameEngine:\n    return e\n")
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache"),
         "--config-file", str(ROOT / "pyproject.toml"), str(probe)],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
        env={"MYPYPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stdout + done.stderr
