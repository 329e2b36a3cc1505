"""The cgroup v2 path, on a fake v2 tree (tests/hosting/fake_cgroup2.py):
the machines that run these tests have cgroup v1 or none, so this is all
the testing the v2 path gets. Each test is one thing the kernel would hold
the arena to."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path
from typing import Iterator

import pytest

from arena.hosting import cgroups
from arena.hosting.cgroups import CgroupKind, SandboxCgroup
from tests.hosting.fake_cgroup2 import FakeCgroup2

MiB = 1 << 20


@pytest.fixture(autouse=True)
def no_last_state(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cgroups, "_last", None)  # what /api/health reports: this test's


@pytest.fixture
def tree(tmp_path: Path) -> FakeCgroup2:
    return FakeCgroup2(tmp_path / "cgroup", root_procs=(1,))


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen(["sleep", "60"])
    yield proc
    proc.kill()
    proc.wait()


def test_the_parent_hands_memory_pids_and_cpu_down_and_caps_all_hosted_cpu(
        tree: FakeCgroup2) -> None:
    state = cgroups.prepare_parent(1.5, tree)
    assert state.kind is CgroupKind.V2 and state.hosted_cpus == 1.5
    root, parent = tree.root, tree.root / "arena"
    assert (root / "cgroup.subtree_control").read_text().split() == ["cpu", "memory", "pids"]
    assert (parent / "cgroup.subtree_control").read_text().split() == ["cpu", "memory", "pids"]
    assert (parent / "cpu.max").read_text() == "150000 100000"
    assert cgroups.current_state() == state  # what /api/health says
    assert cgroups.parent_dirs(tree) == [parent]


def test_a_sandbox_cgroup_limits_memory_swap_processes_and_cpu(tree: FakeCgroup2) -> None:
    box = SandboxCgroup("4242-1", 256 * MiB, 32, cpu_share=1.0, hosted_cpus=0.5, tree=tree)
    child = tree.root / "arena" / "4242-1"
    assert box.kind is CgroupKind.V2 and box.limits_memory and box.dirs == [child]
    assert (child / "memory.max").read_text() == str(256 * MiB)
    assert (child / "memory.swap.max").read_text() == "0"
    assert (child / "pids.max").read_text() == "32"
    # One sandbox may not have more CPU than all hosted bots together.
    assert (child / "cpu.max").read_text() == "50000 100000"
    assert box.procs_files() == [str(child / "cgroup.procs")]


def test_a_sandbox_cgroup_takes_its_process_and_is_removed_once_it_is_killed(
        tree: FakeCgroup2, sleeper: subprocess.Popen[bytes]) -> None:
    box = SandboxCgroup("4242-2", 64 * MiB, 8, cpu_share=1.0, hosted_cpus=1.0, tree=tree)
    child = tree.root / "arena" / "4242-2"
    tree.write(child / "cgroup.procs", str(sleeper.pid))  # what the sandbox's child does
    assert not box.empty()
    box.remove()  # the kernel refuses while a process is inside
    assert child.is_dir()
    box.kill_all()
    sleeper.wait(timeout=10)
    assert box.empty()
    box.remove()
    assert not child.exists()


def test_without_the_memory_controller_a_sandbox_falls_back_to_rlimits_and_leaves_no_folder(
        tmp_path: Path) -> None:
    tree = FakeCgroup2(tmp_path / "cgroup", controllers=("cpu", "pids"))
    box = SandboxCgroup("4242-3", 64 * MiB, 8, cpu_share=1.0, hosted_cpus=1.0, tree=tree)
    assert box.kind is CgroupKind.NONE and not box.limits_memory and box.dirs == []
    assert not (tree.root / "arena" / "4242-3").exists()
    # Nothing was written into files the kernel would not have made.
    assert all(not path.startswith("arena/4242-3/memory") for path, _ in tree.writes)


def test_a_parent_whose_controllers_are_not_handed_down_leaves_the_sandbox_without_cgroups(
        tmp_path: Path) -> None:
    # The arena runs in a cgroup namespace whose owner enabled nothing and
    # refuses changes: the root's subtree_control cannot be written.
    tree = FakeCgroup2(tmp_path / "cgroup", controllers=())
    state = cgroups.prepare_parent(1.0, tree)
    assert state.kind is CgroupKind.NONE and state.hosted_cpus is None
    assert "not available" in (state.reason or ""), state.reason
    box = SandboxCgroup("4242-4", 64 * MiB, 8, cpu_share=1.0, hosted_cpus=1.0, tree=tree)
    assert box.kind is CgroupKind.NONE and box.dirs == []


def test_cgroups_of_a_dead_arena_are_killed_and_removed_and_live_ones_kept(
        tree: FakeCgroup2, sleeper: subprocess.Popen[bytes]) -> None:
    cgroups.prepare_parent(1.0, tree)
    gone = subprocess.Popen(["true"])
    gone.wait()  # an arena process that no longer exists
    stale = [tree.root / "arena" / f"{gone.pid}-{n}" for n in (1, 2)]
    mine = tree.root / "arena" / f"{os.getpid()}-7"
    other = tree.root / "arena" / "not-a-sandbox"
    for path in (*stale, mine, other):
        tree.make(path)
    tree.write(stale[0] / "cgroup.procs", str(sleeper.pid))  # a bot the dead arena left
    assert cgroups.remove_stale(tree) == 2
    assert sleeper.wait(timeout=10) == -9
    assert not any(p.exists() for p in stale)
    assert mine.is_dir() and other.is_dir()


@pytest.mark.skipif(os.geteuid() != 0 or subprocess.run(["which", "bwrap"],
                    capture_output=True).returncode != 0, reason="needs bubblewrap and root")
async def test_a_sandbox_runs_inside_its_v2_cgroup_and_takes_it_away_when_stopped(
        tree: FakeCgroup2, tmp_path: Path) -> None:
    from arena.hosting.sandbox import Sandbox, SandboxLimits, SandboxSpec

    app = tmp_path / "app"
    app.mkdir()
    sandbox = Sandbox(SandboxSpec(command=["sleep", "30"], app_dir=app,
                                  limits=SandboxLimits(hosted_cpus=1.0)), cgroups=tree)
    await sandbox.start()
    try:
        child = tree.root / "arena" / sandbox.name
        assert tree.read(child / "cgroup.procs").split() == [str(sandbox.pid)]
        assert (child / "memory.max").read_text() == str(SandboxLimits().memory_bytes)
    finally:
        await sandbox.stop()
    assert not child.exists()
    assert (tree.root / "arena").is_dir()  # the parent stays for every arena process


def test_a_container_root_with_processes_of_its_own_gets_no_cgroups_and_health_says_why(
        tmp_path: Path, sleeper: subprocess.Popen[bytes]) -> None:
    # The arena itself runs in the namespace's root cgroup: cgroup v2 hands
    # no controller down from a non-root cgroup that has processes.
    tree = FakeCgroup2(tmp_path / "cgroup", root_procs=(sleeper.pid,), namespaced=True)
    state = cgroups.prepare_parent(1.0, tree)
    assert state.kind is CgroupKind.NONE and state.hosted_cpus is None
    assert "processes of its own" in (state.reason or ""), state.reason
    assert "leaf cgroup" in (state.reason or ""), state.reason
    box = SandboxCgroup("4242-5", 64 * MiB, 8, cpu_share=1.0, hosted_cpus=1.0, tree=tree)
    assert box.kind is CgroupKind.NONE and box.dirs == []
