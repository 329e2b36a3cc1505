"""One process at a time, across every process of a store: a section for a
check that must not interleave with the same check elsewhere (a bot's quota
read, then its challenge stored).

* PostgreSQL: a session advisory lock (``pg_advisory_lock``) on a
  connection of its own, held for the section; several nodes wait on the
  database for each other.
* a SQLite file: ``flock`` on ``sections/<key>.lock`` beside the database
  (the processes of ``--workers``, or two servers on one file).
* an in-memory store: one process, whose store calls are already one at a
  time on its writer thread; nothing to lock.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
from collections.abc import Iterator
from typing import Any

from arena.storage.base import StorageError
from arena.storage.deal_keys import store_directory

SECTION_SPACE = 7273702  # advisory lock space (node names use 7273701, migrations 7273700)


def _digest(key: str) -> bytes:
    return hashlib.sha256(key.encode()).digest()


@contextlib.contextmanager
def exclusive(store: Any, key: str) -> Iterator[None]:
    """Hold the section ``key`` of ``store`` while the block runs."""
    url = getattr(store, "url", None)
    if url:
        with _pg_section(url, key):
            yield
        return
    folder = store_directory(store)
    if folder is None:
        yield
        return
    (folder / "sections").mkdir(mode=0o700, exist_ok=True)
    fd = os.open(folder / "sections" / f"{_digest(key).hex()[:16]}.lock",
                 os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # drops the lock


@contextlib.contextmanager
def _pg_section(url: str, key: str) -> Iterator[None]:
    import psycopg

    lock_id = int.from_bytes(_digest(key)[:4], "big", signed=True)
    try:
        conn = psycopg.connect(url, autocommit=True, connect_timeout=10)
    except psycopg.Error as exc:
        raise StorageError(f"cannot reach the database: {exc}") from exc
    try:
        conn.execute("SELECT pg_advisory_lock(%s, %s)", (SECTION_SPACE, lock_id))
        yield  # the lock goes with the session when the connection closes
    finally:
        conn.close()
