"""The README's first steps, run as a newcomer runs them: in a clean clone,
``scripts/demo --help`` (installs nothing), the install-only command, the
same command again (finds the install up to date), then the README's
commands -- the demo until its first tournament page answers, and ``arena
--help`` from the activated virtual environment.

The clone is of the last commit. pip's and npm's caches are shared with
the machine, as on a CI runner that keeps them. The clone installs without
compiling the hot path (``ARENA_PURE_PYTHON=1``, which ``scripts/install`` reads): the
same ``scripts/install`` compiles it on CI's own clean clone, where
``tests/test_compiled.py`` (``ARENA_REQUIRE_COMPILED=1``) fails if the build
did not happen; a second minute of the C compiler here would check nothing
more, since a failed compile leaves the install pure with a warning anyway.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
URL = re.compile(r"standings on (http://\S+)")
PURE = "ARENA_PURE_PYTHON"  # the newcomer's install skips the compile (see above)

pytestmark = [
    pytest.mark.timeout(1200),
    pytest.mark.skipif(not (ROOT / ".git").exists() or shutil.which("git") is None,
                       reason="needs the source as a git checkout to clone"),
]


def readme_first_block() -> list[str]:
    text = (ROOT / "README.md").read_text()
    block = text.split("## First steps", 1)[1].split("\n    ", 1)[1].split("\n\n", 1)[0]
    return [line.split("#")[0].strip() for line in ("    " + block).splitlines()]


def run(clone: Path, command: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    # A login-like environment: no virtualenv of the test run leaks in.
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env[PURE] = "1"
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                  if not p.startswith(str(Path(sys.prefix))))
    return subprocess.run(["bash", "-c", command], cwd=clone, env=env, capture_output=True,
                          text=True, timeout=timeout)


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("first-steps") / "arena"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(target)], check=True, timeout=120)
    return target


def test_the_readme_names_the_install_only_command():
    text = (ROOT / "README.md").read_text()
    assert "scripts/install" in text.split("## Using the arena", 1)[0]


def test_a_newcomer_installs_once_and_the_demo_answers(clone: Path):
    # --help is answered before anything is installed.
    helped = run(clone, "scripts/demo --help", timeout=60)
    assert helped.returncode == 0, helped.stderr
    assert "--http-port" in helped.stdout
    assert not (clone / ".venv").exists()

    installed = run(clone, "scripts/install")
    assert installed.returncode == 0, installed.stdout + installed.stderr
    assert (clone / ".venv/bin/arena").exists()
    stamp = clone / ".venv/.arena-install"
    stamped = stamp.stat().st_mtime_ns

    again = run(clone, "scripts/install", timeout=300)
    assert again.returncode == 0, again.stderr
    assert "up to date" in again.stdout
    assert "pip install" not in again.stdout
    assert stamp.stat().st_mtime_ns == stamped

    commands = readme_first_block()
    assert commands[0] == "scripts/demo"
    demo_ran_until_its_page_answered(clone, commands[0] + " --http-port 0 --port 0")

    rest = " && ".join(commands[1:])
    after = run(clone, rest, timeout=120)
    assert after.returncode == 0, after.stderr
    assert after.stdout.startswith("usage: arena")


def demo_ran_until_its_page_answered(clone: Path, command: str) -> None:
    log = clone / "demo.out"
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    env[PURE] = "1"  # as the install before it: a change of flag would reinstall
    with log.open("w") as out:
        demo = subprocess.Popen(["bash", "-c", command], cwd=clone, env=env, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
    try:
        page = first_page(demo, log, deadline=time.monotonic() + 300)
        assert "Sample bots demo" in page
        printed = log.read_text()
        # The install from the step before is kept.
        assert "up to date" in printed and "pip install" not in printed
    finally:
        # The demo is ours: its process group (bash, the arena, its bots).
        if demo.poll() is None:
            os.killpg(demo.pid, signal.SIGINT)
            try:
                demo.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(demo.pid, signal.SIGKILL)
                demo.wait()


def first_page(demo: subprocess.Popen[bytes], log: Path, deadline: float) -> str:
    while time.monotonic() < deadline:
        found = URL.search(log.read_text())
        if found:
            try:
                with urllib.request.urlopen(found.group(1), timeout=10) as response:
                    return response.read().decode()
            except OSError:
                pass
        assert demo.poll() is None, f"the demo stopped:\n{log.read_text()[-3000:]}"
        time.sleep(0.5)
    raise AssertionError(f"no tournament page within the wait:\n{log.read_text()[-3000:]}")
