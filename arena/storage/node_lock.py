"""Which node names are in use right now, on one store: held locks, not clocks.

A node's name says which running matches and leased slots are its own. Two
processes under one name would abort each other's matches at start-up, so a
name is held, while its process runs, by a lock the operating system or
the database drops the moment the process dies (killed, crashed, or its
machine gone): no heartbeat to wait out, and a node restarted at once gets
its name back at once (a start under a held name asks again for up to
``RETAKE_S`` before it gives up: the database drops a killed session's lock
only when that session's server process has exited).

* PostgreSQL: a session advisory lock on a connection of its own
  (``pg_try_advisory_lock``), released when the session ends;
* a SQLite file: ``flock`` on ``nodes/<name>.lock`` beside the database;
* an in-memory store: one process by definition, nothing to lock.

Processes without a name (one machine, one SQLite file; or a single
``arena tournament``) share one *unnamed* lock. The matches they store carry
no node; a starting unnamed process aborts such leftover matches only if it
takes that lock alone, i.e. when no other unnamed process is running.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import time
from pathlib import Path
from typing import Any

import structlog

from arena.storage.base import StorageError

log = structlog.get_logger(__name__)

UNNAMED = "(unnamed)"
# How long a start under a held name keeps asking before it says the name
# is in use. PostgreSQL drops a killed node's lock when the server process
# of its session exits, a moment after the client died (longer on a loaded
# machine): a node restarted at once would otherwise be refused its own name.
RETAKE_S = 5.0
LOCK_SPACE = 7273701  # the advisory lock space of node names (migrations use 7273700)


class NodeNameTakenError(StorageError):
    """Another running process holds this node name on the same store."""


def _lock_id(name: str) -> int:
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "big", signed=True)


class NodeLocks:
    """Locks on node names of one store (see the module text). ``alone``
    takes a name exclusively (held until close); ``together`` leaves it held
    in shared mode only, which other processes may share."""

    def alone(self, name: str) -> bool:
        """Hold ``name`` exclusively; False if another process holds it."""
        raise NotImplementedError

    def together(self, name: str) -> None:
        """Hold ``name`` in shared mode (from exclusive, or from nothing)."""
        raise NotImplementedError

    def close(self) -> None:
        """Drop every lock (the process's exit does it too)."""


class MemoryLocks(NodeLocks):
    def alone(self, name: str) -> bool:
        return True

    def together(self, name: str) -> None:
        pass


class FileLocks(NodeLocks):
    def __init__(self, folder: Path) -> None:
        self.folder = folder / "nodes"
        self._files: dict[str, int] = {}

    def _open(self, name: str) -> int:
        fd = self._files.get(name)
        if fd is None:
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            safe = hashlib.sha256(name.encode()).hexdigest()[:16]
            fd = os.open(self.folder / f"{safe}.lock", os.O_RDWR | os.O_CREAT, 0o600)
            self._files[name] = fd
        return fd

    def alone(self, name: str) -> bool:
        try:  # converts a shared lock of ours if nobody else shares it
            fcntl.flock(self._open(name), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def together(self, name: str) -> None:
        fcntl.flock(self._open(name), fcntl.LOCK_SH)

    def close(self) -> None:
        for fd in self._files.values():
            os.close(fd)
        self._files.clear()


class PgLocks(NodeLocks):
    def __init__(self, url: str) -> None:
        import psycopg

        try:
            self._conn: Any = psycopg.connect(url, autocommit=True, connect_timeout=10)
        except psycopg.Error as exc:
            raise StorageError(f"cannot reach the database to hold the node name: {exc}") from exc
        self._exclusive: set[str] = set()
        self._shared: set[str] = set()

    def _call(self, function: str, name: str) -> Any:
        return self._conn.execute(f"SELECT {function}(%s, %s)",
                                  (LOCK_SPACE, _lock_id(name))).fetchone()[0]

    def alone(self, name: str) -> bool:
        if name in self._exclusive:
            return True
        if self._shared and name in self._shared:
            # Our own shared hold would not stop us; others' must.
            self._call("pg_advisory_unlock_shared", name)
            self._shared.discard(name)
        if self._call("pg_try_advisory_lock", name):
            self._exclusive.add(name)
            return True
        return False

    def together(self, name: str) -> None:
        if name not in self._shared:
            self._call("pg_advisory_lock_shared", name)
            self._shared.add(name)
        if name in self._exclusive:
            self._call("pg_advisory_unlock", name)
            self._exclusive.discard(name)

    def close(self) -> None:
        self._conn.close()


def locks_for(store: Any) -> NodeLocks:
    from arena.storage.deal_keys import store_directory

    url = getattr(store, "url", None)
    if url:
        return PgLocks(url)
    folder = store_directory(store)
    return FileLocks(folder) if folder is not None else MemoryLocks()


def claim_node(store: Any, reason: str = "server restarted") -> list[str]:
    """Hold this process's node name on ``store`` and close what an earlier
    run under that name left: its running matches are aborted and its slot
    leases and hosted bots' seats released at once. Returns the aborted match ids.

    Raises :class:`NodeNameTakenError` if a running process holds the name."""
    locks = getattr(store, "_node_locks", None)
    fresh = locks is None
    if locks is None:
        locks = locks_for(store)
    node = store.node
    try:
        if node is not None:
            if not _taken_within(locks, node, RETAKE_S):
                raise NodeNameTakenError(
                    f"node name {node!r} is in use by another running arena on "
                    f"{store.db.where}: give this one another name (--node NAME or "
                    "ARENA_NODE=NAME); every node sharing a store needs its own")
            aborted = store.abort_unfinished(reason, node=node)
            released = store.release_node_leases(node)
            if released:
                log.warning("storage.leases_released", node=node, slots=released)
            # Hosted bots it had seated (arena.storage.hosted_table) play again.
            seats = getattr(store, "release_node_seats", None)
            freed = seats(node) if seats is not None else []
            if freed:
                log.warning("storage.hosted_seats_released", node=node, bots=freed)
        elif locks.alone(UNNAMED):
            aborted = store.abort_unfinished(reason)  # node-less matches: nobody runs them
            locks.together(UNNAMED)  # other unnamed processes may start beside this one
        else:
            locks.together(UNNAMED)
            aborted = []  # another unnamed process is running: its matches are live
    except BaseException:
        if fresh:
            locks.close()
        raise
    store._node_locks = locks
    return aborted


def _taken_within(locks: NodeLocks, name: str, seconds: float) -> bool:
    """Hold ``name`` alone, asking again until ``seconds`` have gone by."""
    until = time.monotonic() + seconds
    while not locks.alone(name):
        if time.monotonic() >= until:
            return False
        time.sleep(0.05)
    return True


def dead_nodes(store: Any, names: set[str]) -> list[str]:
    """Of these node names, those no running process holds (their process
    died): taking each name's lock proves it, and the lock is dropped again
    at once, so a process starting under that name a moment later gets it."""
    locks = locks_for(store)
    try:
        return sorted(name for name in names if locks.alone(name))
    finally:
        locks.close()
