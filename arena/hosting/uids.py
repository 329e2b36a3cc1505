"""User ids for sandboxes, unique across every arena process on the machine.

``RLIMIT_NPROC`` counts processes per user id machine-wide, so two sandboxes
sharing an id share one process budget: one could starve the other. Each id
is leased by holding an exclusive ``flock`` on a file named after it in a
directory all arena processes share (``/run/arena-sandbox-uids``). The lock
is the lease: it ends when released, and the kernel ends it when the process
holding it dies, however it dies, so ids of a killed arena are free again.
"""

from __future__ import annotations

import fcntl
import itertools
import os
from dataclasses import dataclass
from pathlib import Path

from arena.hosting.errors import SandboxError

LEASE_DIR = Path("/run/arena-sandbox-uids")
FIRST_UID = 61000  # above ordinary accounts
UID_COUNT = 4000


@dataclass
class UidLease:
    uid: int
    _fd: int | None

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing drops the lock
            self._fd = None


class UidPool:
    def __init__(self, directory: Path = LEASE_DIR, *, first: int = FIRST_UID,
                 count: int = UID_COUNT) -> None:
        self.directory = directory
        self.first, self.count = first, count
        # Start where the last lease of this process stopped: fewer busy ids tried.
        self._cursor = itertools.cycle(range(count))
        self._made = False

    def lease(self) -> UidLease:
        if not self._made:
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            self._made = True
        for _ in range(self.count):
            uid = self.first + next(self._cursor)
            fd = os.open(self.directory / str(uid), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            return UidLease(uid, fd)
        raise SandboxError(f"all {self.count} sandbox user ids are in use on this machine; "
                           "too many sandboxes run at once")


POOL = UidPool()
