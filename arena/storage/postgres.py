"""The PostgreSQL backend: one database shared by several arena nodes.

The driver is psycopg 3 (``psycopg[binary]``) with ``psycopg_pool``: the
:class:`Store` interface is synchronous and runs on the store writer's
thread, which is what psycopg's blocking connections serve directly (an
asyncio driver would need a loop on that thread or a bridge per call).

Connections
    As on SQLite, one *write* connection, under the store's lock, serves
    every method that changes data, so a node's writes keep their order;
    reads come from a small pool (``psycopg_pool.ConnectionPool``) of
    read-only REPEATABLE READ connections, one snapshot per read. A write
    connection broken by a PostgreSQL restart is replaced on the next
    transaction; the pool checks its connections before lending them. While
    PostgreSQL is unreachable every call raises :class:`StorageError` (the
    store writer reports itself unhealthy and tables keep playing from
    memory until a write fails for good).

Durability
    Ordinary commits (event batches, bots) use ``synchronous_commit=off``:
    PostgreSQL returns before its WAL reaches the disk, so a crash of the
    *database server* may lose the last fraction of a second of events, but a
    node dying loses nothing it committed -- SQLite's ``synchronous=NORMAL``
    in PostgreSQL's words. Durable commits (finishing, aborting, tournaments,
    slots) wait for the WAL flush, which also flushes every earlier batch.
"""

from __future__ import annotations

import contextlib
import time
from typing import Any, Iterator, Sequence

import structlog

from arena.storage.base import StorageError
from arena.storage.connections import READ_POOL_SIZE, Database
from arena.storage.schema import POSTGRESQL, migrate
from arena.storage.store import SqlStore

try:
    import psycopg
    import psycopg.conninfo
    import psycopg.errors
    from psycopg_pool import ConnectionPool
except ImportError:  # pragma: no cover - reported by PostgresDatabase
    psycopg = None  # type: ignore[assignment]

log = structlog.get_logger(__name__)

CONNECT_TIMEOUT_S = 10
# While the database is away every transaction tries to reconnect: say so at
# most this often (with the count since), not ten times a second.
RECONNECT_LOG_EVERY_S = 30.0


class Row:
    """A result row read by position or by column name, like ``sqlite3.Row``."""

    __slots__ = ("_values", "_index")

    def __init__(self, values: Sequence[Any], index: dict[str, int]) -> None:
        self._values = values
        self._index = index

    def __getitem__(self, key: int | str) -> Any:
        if isinstance(key, str):
            return self._values[self._index[key]]
        return self._values[key]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def keys(self) -> list[str]:
        return list(self._index)


def _row_factory(cursor: Any) -> Any:
    description = cursor.description or []
    index = {column.name: i for i, column in enumerate(description)}
    return lambda values: Row(values, index)


class _Connection:
    """A psycopg connection taking the store's ``?`` placeholders."""

    def __init__(self, conn: Any) -> None:
        self.raw = conn

    def execute(self, sql: str, params: Sequence[Any] | None = None) -> Any:
        return self.raw.execute(POSTGRESQL.sql(sql), params)

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> Any:
        cur = self.raw.cursor()
        cur.executemany(POSTGRESQL.sql(sql), rows)
        return cur


def describe(url: str) -> str:
    """``host:port/dbname`` of a connection URL, without user or password."""
    try:
        parts = psycopg.conninfo.conninfo_to_dict(url)
    except Exception:  # noqa: BLE001 - a message, not a check
        return "postgresql (unparsable URL)"
    host = parts.get("host") or "localhost"
    port = parts.get("port") or "5432"
    return f"postgresql://{host}:{port}/{parts.get('dbname') or ''}"


def has_arena_schema(url: str) -> bool:
    """Whether the database at ``url`` holds the arena's tables; it only
    looks (nothing is created), so a command can refuse an empty database."""
    if psycopg is None:
        raise StorageError("the PostgreSQL store needs psycopg 3: "
                           "pip install 'psycopg[binary,pool]'")
    try:
        with psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S) as conn:
            row = conn.execute("SELECT to_regclass('schema_version')").fetchone()
    except psycopg.Error as exc:
        raise StorageError(f"cannot reach the database {describe(url)}: {exc}") from exc
    return row is not None and row[0] is not None


class PostgresDatabase(Database):
    """Transactions on one PostgreSQL database (see the module text)."""

    dialect = POSTGRESQL

    def __init__(self, url: str, *, read_pool_size: int = READ_POOL_SIZE) -> None:
        if psycopg is None:
            raise StorageError("the PostgreSQL store needs psycopg 3: "
                               "pip install 'psycopg[binary,pool]'")
        super().__init__()
        self.integrity_error = psycopg.errors.IntegrityError
        self.url = url
        self.where = describe(url)
        self._write: Any = self._connect(autocommit=True)
        self._reconnects = 0  # attempts since the last warning
        self._warned_at = float("-inf")
        self._pool = ConnectionPool(
            url, min_size=1, max_size=max(1, read_pool_size), open=True,
            kwargs={"row_factory": _row_factory, "connect_timeout": CONNECT_TIMEOUT_S},
            configure=self._configure_reader, check=ConnectionPool.check_connection,
            name="arena-readers")

    def _connect(self, *, autocommit: bool) -> Any:
        try:
            return psycopg.connect(self.url, autocommit=autocommit, row_factory=_row_factory,
                                   connect_timeout=CONNECT_TIMEOUT_S)
        except psycopg.Error as exc:
            raise StorageError(f"cannot reach the database {self.where}: {exc}") from exc

    @staticmethod
    def _configure_reader(conn: Any) -> None:
        conn.read_only = True
        conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ

    def _begin(self) -> Any:
        """BEGIN on the write connection, replacing it first if PostgreSQL
        closed it (a restart): nothing was sent yet, so retrying is safe."""
        for attempt in range(2):
            if self._write.closed or self._write.broken:
                self._note_reconnect()
                self._write = self._connect(autocommit=True)
            try:
                self._write.execute("BEGIN")
                return self._write
            except psycopg.OperationalError as exc:
                if attempt or not (self._write.closed or self._write.broken):
                    raise StorageError(f"database {self.where}: {exc}") from exc
        raise AssertionError("unreachable")  # pragma: no cover

    def _note_reconnect(self) -> None:
        self._reconnects += 1
        now = time.monotonic()
        if now - self._warned_at >= RECONNECT_LOG_EVERY_S:
            log.warning("storage.reconnecting", where=self.where, attempts=self._reconnects,
                        next_warning_in_s=RECONNECT_LOG_EVERY_S)
            self._warned_at, self._reconnects = now, 0

    @contextlib.contextmanager
    def tx(self, *, durable: bool = False) -> Iterator[_Connection]:
        with self.lock:
            self.check_open()
            conn = self._begin()
            try:
                try:
                    if not durable:
                        conn.execute("SET LOCAL synchronous_commit TO OFF")
                    yield _Connection(conn)
                    conn.execute("COMMIT")
                except BaseException:
                    if not conn.closed and not conn.broken:
                        conn.execute("ROLLBACK")
                    raise
            except psycopg.errors.IntegrityError:
                raise  # callers turn these into AlreadyExistsError
            except psycopg.Error as exc:
                raise StorageError(f"database {self.where}: {exc}") from exc

    @contextlib.contextmanager
    def read(self) -> Iterator[_Connection]:
        self.check_open()
        try:
            with self._pool.connection(timeout=CONNECT_TIMEOUT_S) as conn:
                yield _Connection(conn)
        except psycopg.Error as exc:  # PoolTimeout too: no connection in time
            raise StorageError(f"database {self.where}: {exc}") from exc

    def close(self) -> None:
        with self.lock:
            if self.closed:
                return
            self.closed = True
            self._pool.close()
            self._write.close()


class PostgresStore(SqlStore):
    """A :class:`arena.storage.base.Store` in a PostgreSQL database, given
    by a URL such as ``postgresql://user@host:5432/arena``."""

    def __init__(self, url: str, *, read_pool_size: int = READ_POOL_SIZE,
                 node: str | None = None) -> None:
        db = PostgresDatabase(url, read_pool_size=read_pool_size)
        super().__init__(db, node=node)
        self.url = url
        try:
            self.migrated_from = migrate(db.tx, POSTGRESQL, db.where)
        except BaseException:
            db.close()
            raise
