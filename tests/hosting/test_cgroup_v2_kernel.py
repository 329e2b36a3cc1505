"""The cgroup v2 path against the kernel's own v2 hierarchy, where one can
be mounted (root, a kernel with cgroup2): not a fake tree.

On a machine whose memory, pids and cpu controllers are bound to cgroup v1
(the hybrid layout), the v2 hierarchy mounts but offers none of them: the
arena must then refuse v2 with a reason an organiser can act on, and a
sandbox must fall back to rlimits. Where the v2 hierarchy has them, the
arena's parent and a sandbox's cgroup get their limits from the kernel.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Iterator

import pytest

from arena.hosting import cgroups
from arena.hosting.cgroups import CgroupKind, CgroupTree, SandboxCgroup

NEEDED = {"memory", "pids", "cpu"}


@pytest.fixture(autouse=True)
def no_last_state(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cgroups, "_last", None)  # what /api/health reports: this test's


@pytest.fixture
def cgroup2(tmp_path: Path) -> Iterator[Path]:
    """The kernel's v2 hierarchy, mounted in a folder of the test's own."""
    if os.geteuid() != 0:
        pytest.skip("mounting cgroup2 needs root")
    root = tmp_path / "cgroup2"
    root.mkdir()
    done = subprocess.run(["mount", "-t", "cgroup2", "none", str(root)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cgroup2 cannot be mounted here: {done.stderr.strip()}")
    had_parent = (root / cgroups.PARENT).exists()
    try:
        yield root
    finally:
        if not had_parent:  # made by this test (one hierarchy: the machine's own)
            try:
                (root / cgroups.PARENT).rmdir()
            except OSError:
                pass
        subprocess.run(["umount", str(root)], check=False)


def controllers(root: Path) -> set[str]:
    return set((root / "cgroup.controllers").read_text().split())


def test_without_its_controllers_v2_is_refused_with_what_to_do(cgroup2: Path) -> None:
    missing = NEEDED - controllers(cgroup2)
    if not missing:
        pytest.skip("this kernel's cgroup v2 has memory, pids and cpu (see the next test)")
    tree = CgroupTree(cgroup2)
    state = cgroups.prepare_parent(1.0, tree)
    assert state.kind is CgroupKind.NONE and state.hosted_cpus is None
    assert state.reason is not None and "not available" in state.reason \
        and "delegate them" in state.reason, state.reason
    # A sandbox there falls back to rlimits (its memory as RLIMIT_DATA).
    sandbox = SandboxCgroup("0-1", 64 << 20, 16, 1.0, 1.0, tree)
    try:
        assert sandbox.kind is CgroupKind.NONE and not sandbox.limits_memory
        assert sandbox.procs_files() == []
    finally:
        sandbox.remove()


def test_with_its_controllers_a_sandbox_cgroup_gets_the_kernels_limits(cgroup2: Path) -> None:
    missing = NEEDED - controllers(cgroup2)
    if missing:
        pytest.skip(f"this kernel's cgroup v2 lacks {', '.join(sorted(missing))} (bound to "
                    "cgroup v1 here; a controller is in one hierarchy at a time)")
    tree = CgroupTree(cgroup2)
    state = cgroups.prepare_parent(1.0, tree)
    assert state.kind is CgroupKind.V2, state.reason
    name = f"{os.getpid()}-1"
    sandbox = SandboxCgroup(name, 64 << 20, 16, 1.0, 1.0, tree)
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        directory = cgroup2 / cgroups.PARENT / name
        assert sandbox.kind is CgroupKind.V2
        assert (directory / "memory.max").read_text().strip() == str(64 << 20)
        assert (directory / "pids.max").read_text().strip() == "16"
        assert (directory / "cpu.max").read_text().split() == ["100000", "100000"]
        (directory / "cgroup.procs").write_text(str(sleeper.pid))
        assert str(sleeper.pid) in (directory / "cgroup.procs").read_text().split()
        sandbox.kill_all()
        assert sleeper.wait(timeout=30) == -9
    finally:
        sleeper.kill()
        sleeper.wait()
        sandbox.remove()
    assert not (cgroup2 / cgroups.PARENT / name).exists()
