"""Connections and transactions: what a SQL store asks of its backend.

A :class:`Database` hands out write transactions (:meth:`Database.tx`) and
read snapshots (:meth:`Database.read`); the connection it yields takes
``execute(sql, params)`` / ``executemany(sql, rows)`` with ``?``
placeholders and returns cursors with ``fetchone`` / ``fetchall`` /
``rowcount``, whose rows are read by position or by column name.

SQLite (:class:`SqliteDatabase`)
    One *write* connection, guarded by a lock, serves every method that
    changes data; the server calls those from the single writer thread
    (:mod:`arena.storage.writer`). Reads use a small bounded pool of separate
    read-only connections, so the web can read from its own thread (or from
    executor threads) while a write transaction is open: in WAL mode readers
    never wait for the writer. A ``:memory:`` database cannot be shared
    between connections, so there every call goes through the write
    connection under the lock.

    The journal is WAL. Ordinary commits (event batches, bots) run with
    ``synchronous=NORMAL``: a commit survives the process being killed
    (SIGKILL) because the WAL lives in the OS page cache, and only a power
    cut can lose the last few event batches. Durable commits (finishing or
    aborting a match, creating a tournament, completing a schedule slot)
    switch to ``synchronous=FULL`` for that transaction, so the WAL (with
    every earlier event batch) is fsynced before they return. That costs one
    fsync per match, not one per event.

The PostgreSQL counterpart is :class:`arena.storage.postgres.PostgresDatabase`.
"""

from __future__ import annotations

import abc
import contextlib
import queue
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Iterator

import structlog

from arena.storage.base import StorageError
from arena.storage.private import private_file, tighten_file
from arena.storage.schema import SQLITE, Dialect

READ_POOL_SIZE = 4
CLOSE_WAIT_S = 10.0  # how long close() waits for reads in flight on other threads

log = structlog.get_logger("arena.storage")
BUSY_TIMEOUT_MS = 5000


class Database(abc.ABC):
    """Transactions on one database, for :class:`arena.storage.store.SqlStore`."""

    dialect: Dialect
    # The driver's exception for a violated UNIQUE / PRIMARY KEY / FOREIGN KEY
    # constraint: store methods turn it into AlreadyExistsError.
    integrity_error: type[Exception]
    where: str  # names the database in messages (a path or a URL without password)

    def __init__(self) -> None:
        # Serialises this store's writes (and the memory of the event log).
        self.lock = threading.RLock()
        self.closed = False

    @abc.abstractmethod
    def tx(self, *, durable: bool = False) -> contextlib.AbstractContextManager[Any]:
        """One write transaction, committed when the block ends; ``durable``
        makes the commit survive a power cut before it returns."""

    @abc.abstractmethod
    def read(self) -> contextlib.AbstractContextManager[Any]:
        """A connection reading one consistent snapshot."""

    @abc.abstractmethod
    def close(self) -> None: ...

    def check_open(self) -> None:
        if self.closed:
            raise StorageError("the store is closed")


class SqliteDatabase(Database):
    """One SQLite file (or ``":memory:"`` for tests); see the module text."""

    dialect = SQLITE
    integrity_error = sqlite3.IntegrityError

    def __init__(self, path: str | Path, *, read_pool_size: int = READ_POOL_SIZE) -> None:
        super().__init__()
        self.path = self.where = str(path)
        self.memory = self.path == ":memory:" or self.path.startswith("file::memory:")
        if not self.memory:
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            try:  # 0600 before SQLite opens it: its WAL and SHM take the file's mode
                private_file(self.path)
                for suffix in ("-wal", "-shm", "-journal"):
                    tighten_file(self.path + suffix)
            except OSError as exc:
                raise StorageError(f"cannot create the database {self.path}: {exc}") from exc
        try:
            self.write_connection = self._connect()
            self.write_connection.execute("PRAGMA journal_mode=WAL")
            self.write_connection.execute("PRAGMA synchronous=NORMAL")
        except sqlite3.Error as exc:
            raise StorageError(f"cannot open the database {self.path}: {exc}") from exc
        self._read_slot_count = max(1, read_pool_size)
        self._read_slots = threading.BoundedSemaphore(self._read_slot_count)
        self._idle_readers: queue.LifoQueue[sqlite3.Connection] = queue.LifoQueue()
        self.all_readers: list[sqlite3.Connection] = []

    def _connect(self, *, readonly: bool = False) -> sqlite3.Connection:
        if readonly:
            uri = Path(self.path).resolve().as_uri() + "?mode=ro"
            conn = sqlite3.connect(uri, uri=True, isolation_level=None,
                                   check_same_thread=False)
        else:
            conn = sqlite3.connect(self.path, isolation_level=None,
                                   check_same_thread=False)
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA foreign_keys=ON")
        return conn

    @contextlib.contextmanager
    def tx(self, *, durable: bool = False) -> Iterator[sqlite3.Connection]:
        with self.lock:
            self.check_open()
            db = self.write_connection
            if durable:
                db.execute("PRAGMA synchronous=FULL")
            try:
                db.execute("BEGIN IMMEDIATE")
                try:
                    yield db
                    db.execute("COMMIT")
                except BaseException:
                    if db.in_transaction:
                        db.execute("ROLLBACK")
                    raise
            except sqlite3.IntegrityError:
                raise  # callers turn these into AlreadyExistsError
            except sqlite3.Error as exc:
                raise StorageError(f"database {self.path}: {exc}") from exc
            finally:
                if durable:
                    db.execute("PRAGMA synchronous=NORMAL")

    @contextlib.contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        if self.memory:
            with self.lock:
                self.check_open()
                yield self.write_connection
            return
        self.check_open()
        self._read_slots.acquire()
        try:
            self.check_open()  # closed while this read waited for a slot
            try:
                conn = self._idle_readers.get_nowait()
            except queue.Empty:
                conn = self._connect(readonly=True)
                with self.lock:
                    self.all_readers.append(conn)
            try:
                conn.execute("BEGIN")
                try:
                    yield conn
                finally:
                    conn.execute("COMMIT")
            finally:
                self._idle_readers.put(conn)
        finally:
            self._read_slots.release()

    def close(self) -> None:
        with self.lock:
            if self.closed:
                return
            self.closed = True
        # Reads still running on other threads (a service's poll whose task
        # was cancelled, a page's query) finish first: closing a connection
        # under a running query crashes the sqlite3 module. New reads are
        # refused from here on (check_open).
        deadline = time.monotonic() + CLOSE_WAIT_S
        held = 0
        for _ in range(self._read_slot_count):
            if not self._read_slots.acquire(timeout=max(0.0, deadline - time.monotonic())):
                log.warning("store_closed_under_a_read", path=str(self.path))
                break
            held += 1
        for _ in range(held):  # a read waiting for a slot now finds the store closed
            self._read_slots.release()
        with self.lock:
            for conn in self.all_readers:
                conn.close()
            self.all_readers.clear()
            try:
                self.write_connection.execute("PRAGMA optimize")
            except sqlite3.OperationalError:
                # Everything is committed; only the planner's statistics wait
                # for the next close. Another process writing to the same
                # file (a worker of the same server) can hold the lock.
                pass
            finally:
                self.write_connection.close()
