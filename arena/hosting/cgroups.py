"""Control groups for sandboxes: one parent for all hosted bots, one child each.

Layout (cgroup v2, or each of v1's ``memory``, ``pids`` and ``cpu``
hierarchies)::

    /sys/fs/cgroup/arena/            every hosted bot of every arena process on
                                     the machine: ``cpu.max`` caps their CPU
                                     together, so remote tables keep their pace
    /sys/fs/cgroup/arena/<pid>-<n>/  one sandbox: memory, processes, one core

A child is named after the arena process that made it. A process killed
with SIGKILL cannot remove its children, so the next arena to start removes
those whose process is gone (:func:`remove_stale`).

Where the machine gives the arena no cgroups (:attr:`CgroupKind.NONE`),
sandboxes fall back to rlimits alone and ``/api/health`` says so.

Every touch of the hierarchy goes through a :class:`CgroupTree`: making and
removing a cgroup, reading and writing its files. On a real machine these
are plain file operations (the kernel does the rest); tests hand a fake
tree in a temporary folder that does what the kernel does (a v2 tree, which
the machines that run the tests may not have).
"""

from __future__ import annotations

import enum
import errno
import os
import re
import signal
import time
from dataclasses import dataclass
from pathlib import Path

import structlog

log = structlog.get_logger("arena.hosting.cgroups")

CGROUP_ROOT = Path("/sys/fs/cgroup")
PARENT = "arena"
PERIOD_US = 100_000
_CHILD = re.compile(r"^(\d+)-\d+$")
_V1_CONTROLLERS = ("memory", "pids", "cpu")


def default_hosted_cpus() -> float:
    """All hosted bots together: half the machine's cores (at least one), so
    the server and remote bots keep the other half."""
    return max(1.0, (os.cpu_count() or 2) / 2)


class CgroupKind(str, enum.Enum):
    V2 = "v2"
    V1 = "v1"
    NONE = "none"


@dataclass(frozen=True)
class CgroupState:
    """What ``/api/health`` reports about the hosted bots' cgroups."""

    kind: CgroupKind
    hosted_cpus: float | None  # the parent's cap, in cores; None without cgroups
    reason: str | None = None  # why there are none


class CgroupTree:
    """The cgroup hierarchy at ``root`` (``CGROUP_ROOT`` when None, read at
    each use so tests may point it elsewhere)."""

    def __init__(self, root: Path | None = None) -> None:
        self._root = root

    @property
    def root(self) -> Path:
        return self._root or CGROUP_ROOT

    def make(self, path: Path) -> None:
        """Make a cgroup (the kernel gives it its files)."""
        path.mkdir(exist_ok=True)

    def remove(self, path: Path) -> None:
        """Remove an empty cgroup; OSError while processes or children remain."""
        path.rmdir()

    def write(self, path: Path, value: str) -> None:
        path.write_text(value)

    def read(self, path: Path) -> str:
        return path.read_text()

    def exists(self, path: Path) -> bool:
        return path.exists()

    def children(self, path: Path) -> list[Path]:
        return [p for p in path.iterdir() if p.is_dir()] if path.is_dir() else []


def _tree(tree: CgroupTree | None) -> CgroupTree:
    return tree if tree is not None else CgroupTree()


def _kind(root: Path) -> CgroupKind:
    if (root / "cgroup.controllers").exists():
        return CgroupKind.V2
    if all((root / name / "cgroup.procs").exists() for name in _V1_CONTROLLERS):
        return CgroupKind.V1
    return CgroupKind.NONE


def parent_dirs(tree: CgroupTree | None = None) -> list[Path]:
    """The parent cgroup's directories (one in v2, one per controller in v1)."""
    root = _tree(tree).root
    kind = _kind(root)
    if kind is CgroupKind.V2:
        return [root / PARENT]
    if kind is CgroupKind.V1:
        return [root / name / PARENT for name in _V1_CONTROLLERS]
    return []


_last: CgroupState | None = None


def current_state() -> CgroupState:
    """What the last sandbox of this process found (for ``/api/health``)."""
    if _last is not None:
        return _last
    kind = _kind(CGROUP_ROOT)
    return CgroupState(kind, None, None if kind is not CgroupKind.NONE
                       else f"no cgroup hierarchy at {CGROUP_ROOT}")


def prepare_parent(hosted_cpus: float, tree: CgroupTree | None = None) -> CgroupState:
    """Make the parent cgroup and set the cap on all hosted bots' CPU. Every
    arena process on the machine shares it (the last to start sets the cap)."""
    global _last
    _last = state = _prepare_parent(hosted_cpus, _tree(tree))
    return state


def _prepare_parent(hosted_cpus: float, tree: CgroupTree) -> CgroupState:
    root = tree.root
    kind = _kind(root)
    quota = str(int(hosted_cpus * PERIOD_US))
    try:
        if kind is CgroupKind.V2:
            # Controllers reach a child only when its parent hands them down.
            refused = _enable(tree, root, "+memory +pids +cpu")
            parent = root / PARENT
            tree.make(parent)
            _enable(tree, parent, "+memory +pids +cpu")
            if not tree.exists(parent / "cpu.max"):
                return CgroupState(CgroupKind.NONE, None, _not_handed_down(root, refused))
            tree.write(parent / "cpu.max", f"{quota} {PERIOD_US}")
        elif kind is CgroupKind.V1:
            for name in _V1_CONTROLLERS:
                tree.make(root / name / PARENT)
            cpu = root / "cpu" / PARENT
            tree.write(cpu / "cpu.cfs_period_us", str(PERIOD_US))
            tree.write(cpu / "cpu.cfs_quota_us", quota)
        else:
            return CgroupState(kind, None, f"no cgroup hierarchy at {root}")
    except OSError as exc:
        log.warning("cgroups_unavailable", error=str(exc))
        return CgroupState(CgroupKind.NONE, None, f"cannot make the arena's cgroup: {exc}")
    return CgroupState(kind, hosted_cpus)


def _enable(tree: CgroupTree, directory: Path, controllers: str) -> OSError | None:
    try:
        tree.write(directory / "cgroup.subtree_control", controllers)
    except OSError as exc:  # already enabled by whoever owns the tree, or refused
        log.info("cgroup_controllers_not_enabled", directory=str(directory), error=str(exc))
        return exc
    return None


def _not_handed_down(root: Path, refused: OSError | None) -> str:
    """Why the arena's cgroup got no controllers, in words an organiser can act on."""
    if refused is not None and refused.errno == errno.EBUSY:
        return (f"the cgroup at {root} has processes of its own, so cgroup v2 hands no "
                "controller down from it (the no-internal-processes rule): start the arena "
                "in a leaf cgroup of a delegated subtree, or move the processes at "
                f"{root} into a child cgroup first")
    if refused is not None and refused.errno == errno.ENOENT:
        return (f"the memory, pids or cpu controller is not available at {root} (not in its "
                "cgroup.controllers): delegate them to the arena's cgroup")
    return (f"the memory, pids and cpu controllers do not reach {root / PARENT}"
            + (f": {refused}" if refused is not None else ""))


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale(tree: CgroupTree | None = None) -> int:
    """Remove sandbox cgroups whose arena process is gone (it was SIGKILLed
    and could not remove them), killing anything left inside; how many."""
    tree = _tree(tree)
    removed = 0
    for parent in parent_dirs(tree):
        for child in tree.children(parent):
            match = _CHILD.match(child.name)
            if match is None or _pid_alive(int(match.group(1))):
                continue
            kill_procs(child, tree)
            for _ in range(40):  # (a worker thread) until the killed processes are gone
                if _empty(child, tree):
                    break
                time.sleep(0.05)
            try:
                tree.remove(child)
                removed += 1
            except OSError as exc:  # a process still dying: the next start tries again
                log.info("stale_cgroup_kept", path=str(child), error=str(exc))
    if removed:
        log.info("stale_cgroups_removed", count=removed)
    return removed


def _empty(directory: Path, tree: CgroupTree) -> bool:
    try:
        return not tree.read(directory / "cgroup.procs").strip()
    except OSError:
        return True


def kill_procs(directory: Path, tree: CgroupTree | None = None) -> None:
    try:
        pids = _tree(tree).read(directory / "cgroup.procs").split()
    except OSError:
        return
    for pid in pids:
        try:
            os.kill(int(pid), signal.SIGKILL)
        except (ProcessLookupError, ValueError, PermissionError):
            pass


class SandboxCgroup:
    """One sandbox's cgroups under the parent, where the machine allows them."""

    def __init__(self, name: str, memory_bytes: int, processes: int, cpu_share: float,
                 hosted_cpus: float, tree: CgroupTree | None = None) -> None:
        self.dirs: list[Path] = []
        self.tree = tree = _tree(tree)
        root = tree.root
        self.kind = CgroupKind.NONE
        state = prepare_parent(hosted_cpus, tree)
        # A v1 child may not be given more CPU than its parent has.
        cpu = str(int(min(cpu_share, hosted_cpus) * PERIOD_US))
        try:
            if state.kind is CgroupKind.V2:
                self._make(root / PARENT / name, {
                    "memory.max": str(memory_bytes), "memory.swap.max": "0",
                    "pids.max": str(processes), "cpu.max": f"{cpu} {PERIOD_US}"})
                if not tree.exists(self.dirs[0] / "memory.max"):
                    raise OSError("the memory controller is not enabled for the arena's cgroup")
            elif state.kind is CgroupKind.V1:
                self._make(root / "memory" / PARENT / name,
                           {"memory.limit_in_bytes": str(memory_bytes)})
                self._make(root / "pids" / PARENT / name, {"pids.max": str(processes)})
                self._make(root / "cpu" / PARENT / name,
                           {"cpu.cfs_period_us": str(PERIOD_US), "cpu.cfs_quota_us": cpu})
            self.kind = state.kind
        except OSError as exc:
            log.info("cgroups_unavailable", error=str(exc))
            self.remove()
            self.dirs = []

    def _make(self, path: Path, settings: dict[str, str]) -> None:
        self.tree.make(path)
        self.dirs.append(path)
        for key, value in settings.items():
            if self.tree.exists(path / key):  # a controller not handed down has no files
                self.tree.write(path / key, value)

    @property
    def limits_memory(self) -> bool:
        return self.kind is not CgroupKind.NONE

    def procs_files(self) -> list[str]:
        return [str(d / "cgroup.procs") for d in self.dirs]

    def kill_all(self) -> None:
        for directory in self.dirs:
            kill_procs(directory, self.tree)

    def empty(self) -> bool:
        return all(_empty(d, self.tree) for d in self.dirs)

    def remove(self) -> None:
        for directory in reversed(self.dirs):
            try:
                self.tree.remove(directory)
            except OSError:
                pass
