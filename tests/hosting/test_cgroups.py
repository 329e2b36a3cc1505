"""All hosted bots share one parent cgroup that caps their CPU together, and
the cgroups a SIGKILLed arena left behind are removed at the next start."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from arena.hosting import cgroups
from arena.hosting.sandbox import (Sandbox, SandboxLimits, SandboxSpec, python_mounts,
                                   sandbox_python)
from tests.hosting.conftest import needs_sandbox

pytestmark = needs_sandbox

SPIN = "while True:\n    pass\n"


def cpu_files() -> tuple[Path, str] | None:
    """The parent's CPU cap file and its format, or None without cgroups."""
    kind = cgroups._kind(cgroups.CGROUP_ROOT)
    if kind is cgroups.CgroupKind.V2:
        return cgroups.CGROUP_ROOT / "arena", "v2"
    if kind is cgroups.CgroupKind.V1:
        return cgroups.CGROUP_ROOT / "cpu" / "arena", "v1"
    return None


needs_cgroups = pytest.mark.skipif(cpu_files() is None, reason="this machine has no cgroups")


@needs_cgroups
async def test_spinning_hosted_bots_run_under_the_parents_cpu_cap(tmp_path: Path) -> None:
    parent, kind = cpu_files()  # type: ignore[misc]
    app = tmp_path / "app"
    app.mkdir()
    (app / "spin.py").write_text(SPIN)
    limits = SandboxLimits(hosted_cpus=1.0)
    spinners = [Sandbox(SandboxSpec(command=[sandbox_python(), "/bot/spin.py"], app_dir=app,
                                    mounts=python_mounts(), limits=limits)) for _ in range(3)]
    try:
        for sandbox in spinners:
            await sandbox.start()
        if kind == "v2":
            assert (parent / "cpu.max").read_text().split() == ["100000", "100000"]
        else:
            assert (parent / "cpu.cfs_quota_us").read_text().strip() == "100000"
            assert (parent / "cpu.cfs_period_us").read_text().strip() == "100000"
        for sandbox in spinners:  # each spinner's cgroup is a child of the parent
            child = parent / sandbox.name
            assert child.is_dir()
            for _ in range(100):
                if str(sandbox.pid) in (child / "cgroup.procs").read_text().split():
                    break
                await asyncio.sleep(0.05)
            assert str(sandbox.pid) in (child / "cgroup.procs").read_text().split()
        # Three spinners want three cores; the parent lets them have one:
        # the kernel counts the periods it throttled them in.
        for _ in range(200):
            stat = dict(line.split() for line in (parent / "cpu.stat").read_text().splitlines())
            if int(stat["nr_throttled"]) > 0:
                break
            await asyncio.sleep(0.05)
        assert int(stat["nr_throttled"]) > 0, stat
    finally:
        for sandbox in spinners:
            await sandbox.stop()


@needs_cgroups
def test_cgroups_of_a_sigkilled_arena_are_removed_at_the_next_start(tmp_path: Path) -> None:
    app = tmp_path / "app"
    app.mkdir()
    (app / "sleep.py").write_text("import time\ntime.sleep(3600)\n")
    script = textwrap.dedent(f"""
        import asyncio, sys
        from arena.hosting.sandbox import Sandbox, SandboxSpec, python_mounts, sandbox_python
        async def main():
            sandbox = Sandbox(SandboxSpec(command=[sandbox_python(), "/bot/sleep.py"],
                                          app_dir={str(app)!r}, mounts=python_mounts()))
            await sandbox.start()
            print("sandbox", sandbox.name, flush=True)
            await asyncio.sleep(3600)
        asyncio.run(main())
    """)
    arena = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                             cwd=Path(__file__).resolve().parents[2])
    name = ""
    for line in arena.stdout:  # type: ignore[union-attr]  # (its log lines come first)
        if line.startswith("sandbox "):
            name = line.split()[1]
            break
    assert name, "the arena process did not start its sandbox"
    left = [d / name for d in cgroups.parent_dirs()]
    assert all(d.is_dir() for d in left)
    os.kill(arena.pid, signal.SIGKILL)  # no chance to clean up
    arena.wait(30)
    assert all(d.is_dir() for d in left)  # what a killed arena leaves
    mine = [d / f"{os.getpid()}-999999" for d in cgroups.parent_dirs()]
    for d in mine:  # a live arena's cgroup is not touched
        d.mkdir()
    try:
        cgroups.remove_stale()
        assert not any(d.exists() for d in left)
        assert all(d.is_dir() for d in mine)
    finally:
        for d in mine:
            d.rmdir()


def test_health_says_when_there_are_no_cgroups(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    blocked = tmp_path / "none"
    blocked.write_text("")
    monkeypatch.setattr(cgroups, "CGROUP_ROOT", blocked)
    monkeypatch.setattr(cgroups, "_last", None)
    state = cgroups.prepare_parent(1.0)
    assert state.kind is cgroups.CgroupKind.NONE and state.hosted_cpus is None
    assert str(blocked) in (state.reason or "")
    assert cgroups.current_state() == state
