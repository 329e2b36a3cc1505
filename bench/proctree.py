"""A process tree's CPU time and memory, read from Linux's /proc.

For benchmarks that measure a server from outside: the server runs as a
subprocess (perhaps with worker processes of its own), and its cost is what
the kernel has charged to it, whatever the server says about itself.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path

_TICK = os.sysconf("SC_CLK_TCK")
_PAGE = os.sysconf("SC_PAGE_SIZE")


class ProcUnavailable(RuntimeError):
    """/proc does not show the process (not Linux, or it has exited)."""


def _stat_fields(pid: int) -> list[str]:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError as exc:
        raise ProcUnavailable(f"process {pid} is not in /proc: {exc}") from None
    # The command name (field 2) may hold spaces and parentheses: split after its last ')'.
    return text.rsplit(")", 1)[1].split()


def process_cpu_s(pid: int | str) -> float:
    """CPU seconds (user + system) of process ``pid`` itself ("self" too):
    no children."""
    fields = _stat_fields(pid)  # type: ignore[arg-type]
    return (int(fields[11]) + int(fields[12])) / _TICK


def children(pid: int) -> list[int]:
    """Direct children of ``pid`` (every thread's list; empty if it is gone)."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in tasks:
        try:
            found += [int(c) for c in Path(f"/proc/{pid}/task/{tid}/children").read_text().split()]
        except OSError:
            continue
    return found


def tree(pid: int) -> list[int]:
    """``pid`` and all its descendants alive now."""
    pids, todo = [], [pid]
    while todo:
        p = todo.pop()
        pids.append(p)
        todo += children(p)
    return pids


def tree_cpu_s(pid: int) -> float:
    """CPU seconds (user + system) charged to ``pid``, its live descendants,
    and the descendants that have exited and been waited for."""
    total = 0.0
    for i, p in enumerate(tree(pid)):
        try:
            fields = _stat_fields(p)
        except ProcUnavailable:
            if i == 0:
                raise
            continue  # a worker that just exited: its parent's cutime has it
        # utime, stime, cutime, cstime are fields 14-17 (index 11-14 after the name).
        total += sum(int(f) for f in fields[11:15]) / _TICK
    return total


def tree_rss_bytes(pid: int) -> int:
    """Resident memory of ``pid`` and its live descendants, summed."""
    total = 0
    for p in tree(pid):
        try:
            total += int(Path(f"/proc/{p}/statm").read_text().split()[1]) * _PAGE
        except (OSError, IndexError):
            continue
    return total


@dataclass
class RssPeak:
    """Samples a process tree's RSS every ``interval_s`` in a thread; the
    peak of the sums is kept (the tree's own high-water marks would count
    each process's peak, even ones at different times)."""

    pid: int
    interval_s: float = 0.1
    peak: int = 0

    def __post_init__(self) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="rss-sampler", daemon=True)

    def start(self) -> "RssPeak":
        self.peak = tree_rss_bytes(self.pid)
        self._thread.start()
        return self

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, tree_rss_bytes(self.pid))
        return self.peak

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.peak = max(self.peak, tree_rss_bytes(self.pid))
