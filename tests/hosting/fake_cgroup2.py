"""A cgroup v2 hierarchy in a plain folder, doing what the kernel does where
the arena relies on it (Documentation/admin-guide/cgroup-v2.rst):

- a new cgroup gets ``cgroup.procs``, ``cgroup.controllers`` (what its
  parent's ``cgroup.subtree_control`` hands down), an empty
  ``cgroup.subtree_control``, and the interface files of those controllers
  only (``memory.max`` exists only where ``memory`` was handed down);
- ``cgroup.subtree_control`` takes ``+name``/``-name`` words, all or none:
  a controller the cgroup was not given is refused (ENOENT), and a non-root
  cgroup with processes in it may not hand controllers down (EBUSY, the "no
  internal processes" rule);
- limits take only the kernel's forms (``max`` or a number; ``cpu.max`` is
  ``QUOTA PERIOD`` with a quota of at least 1000 µs), else EINVAL;
- no file can be created in a cgroup (ENOENT for a name the kernel did not
  make);
- ``cgroup.procs`` lists only live processes, and writing a pid moves it
  there from wherever it was;
- a cgroup with live processes or child cgroups cannot be removed (EBUSY);
  removing an empty one takes its files with it.

The machines that run the tests have cgroup v1 (or none): this is how the
v2 path is tested at all. It is not a real kernel: what it checks is listed
above, and nothing else.
"""

from __future__ import annotations

import errno
import os
import re
from pathlib import Path

from arena.hosting.cgroups import CgroupTree

FILES = {
    "memory": {"memory.max": "max", "memory.swap.max": "max", "memory.current": "0",
               "memory.events": "oom 0\noom_kill 0"},
    "pids": {"pids.max": "max", "pids.current": "0"},
    "cpu": {"cpu.max": "max 100000", "cpu.weight": "100", "cpu.stat": "usage_usec 0"},
    "io": {"io.max": ""},
}
CORE = ("cgroup.procs", "cgroup.controllers", "cgroup.subtree_control", "cgroup.events")
_LIMIT = re.compile(r"^(max|\d+)$")
_CPU_MAX = re.compile(r"^(max|\d+)( \d+)?$")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie is gone for the kernel's cgroup.procs
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


class FakeCgroup2(CgroupTree):
    def __init__(self, root: Path, controllers: tuple[str, ...] = ("cpu", "io", "memory", "pids"),
                 root_procs: tuple[int, ...] = (), namespaced: bool = False) -> None:
        """``namespaced``: ``root`` is the root of a cgroup namespace (a
        container's), not the machine's, so the no-internal-processes rule
        holds for it too."""
        super().__init__(root)
        self.namespaced = namespaced
        root.mkdir(parents=True, exist_ok=True)
        (root / "cgroup.controllers").write_text(" ".join(sorted(controllers)))
        (root / "cgroup.subtree_control").write_text("")
        (root / "cgroup.procs").write_text("".join(f"{p}\n" for p in root_procs))
        self.writes: list[tuple[str, str]] = []  # (path under root, value), in order

    def _fail(self, code: int, path: Path) -> OSError:
        return OSError(code, os.strerror(code), str(path))

    def _is_cgroup(self, path: Path) -> bool:
        return (path / "cgroup.controllers").is_file()

    def make(self, path: Path) -> None:
        if self._is_cgroup(path):
            return  # EEXIST, which the arena's make ignores (another arena made it)
        if not self._is_cgroup(path.parent):
            raise self._fail(errno.ENOENT, path)
        given = (path.parent / "cgroup.subtree_control").read_text().split()
        path.mkdir()
        (path / "cgroup.controllers").write_text(" ".join(given))
        (path / "cgroup.subtree_control").write_text("")
        (path / "cgroup.procs").write_text("")
        (path / "cgroup.events").write_text("populated 0\nfrozen 0")
        for name in given:
            for file, value in FILES.get(name, {}).items():
                (path / file).write_text(value)

    def remove(self, path: Path) -> None:
        if not self._is_cgroup(path):
            raise self._fail(errno.ENOENT, path)
        if self.children(path) or self.read(path / "cgroup.procs").strip():
            raise self._fail(errno.EBUSY, path)
        for file in path.iterdir():
            file.unlink()
        path.rmdir()

    def read(self, path: Path) -> str:
        if path.name == "cgroup.procs":
            return "".join(f"{p}\n" for p in self._procs(path.parent))
        return path.read_text()

    def _procs(self, cgroup: Path) -> list[int]:
        return [int(p) for p in (cgroup / "cgroup.procs").read_text().split() if _alive(int(p))]

    def children(self, path: Path) -> list[Path]:
        return [p for p in path.iterdir() if p.is_dir() and self._is_cgroup(p)] \
            if path.is_dir() else []

    def all_cgroups(self) -> list[Path]:
        return [self.root, *(p for p in sorted(self.root.rglob("*")) if self._is_cgroup(p))]

    def write(self, path: Path, value: str) -> None:
        cgroup, name = path.parent, path.name
        if not path.is_file() or not self._is_cgroup(cgroup):
            raise self._fail(errno.ENOENT, path)  # cgroupfs makes no new files
        self.writes.append((str(path.relative_to(self.root)), value))
        if name == "cgroup.subtree_control":
            self._subtree_control(cgroup, value)
        elif name == "cgroup.procs":
            pid = int(value.strip())
            if not _alive(pid):
                raise self._fail(errno.ESRCH, path)
            for other in self.all_cgroups():  # a process is in exactly one cgroup
                left = [p for p in self._procs(other) if p != pid]
                (other / "cgroup.procs").write_text("".join(f"{p}\n" for p in left))
            path.write_text(path.read_text() + f"{pid}\n")
        elif name == "cpu.max":
            match = _CPU_MAX.match(value.strip())
            if match is None or (match.group(1) != "max" and int(match.group(1)) < 1000):
                raise self._fail(errno.EINVAL, path)
            period = (match.group(2) or " 100000").strip()
            path.write_text(f"{match.group(1)} {period}")
        elif name in ("memory.max", "memory.swap.max", "pids.max"):
            if not _LIMIT.match(value.strip()):
                raise self._fail(errno.EINVAL, path)
            path.write_text(value.strip())
        else:
            path.write_text(value)

    def _subtree_control(self, cgroup: Path, value: str) -> None:
        given = set((cgroup / "cgroup.controllers").read_text().split())
        enabled = set((cgroup / "cgroup.subtree_control").read_text().split())
        words = value.split()
        for word in words:  # all or none, as the kernel parses them
            if word[:1] not in "+-" or word[1:] not in given:
                raise self._fail(errno.ENOENT, cgroup / "cgroup.subtree_control")
        inner = cgroup != self.root or self.namespaced
        if inner and self._procs(cgroup) and any(w[0] == "+" for w in words):
            raise self._fail(errno.EBUSY, cgroup / "cgroup.subtree_control")
        for word in words:
            (enabled.add if word[0] == "+" else enabled.discard)(word[1:])
        (cgroup / "cgroup.subtree_control").write_text(" ".join(sorted(enabled)))
