"""The SQLite backend (the embedded default): a :class:`SqlStore` on one file.

Connections, WAL and durability: :mod:`arena.storage.connections`; the
schema shared with PostgreSQL: :mod:`arena.storage.schema`; the event log:
:mod:`arena.storage.events`.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from arena.storage.connections import READ_POOL_SIZE, SqliteDatabase
from arena.storage.schema import SCHEMA_VERSION, SQLITE, migrate, migrations_for
from arena.storage.store import SqlStore

# The migrations as SQLite runs them (a database of an older schema is
# brought up to date on open).
MIGRATIONS: list[list[str]] = migrations_for(SQLITE)

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "SqliteStore"]


class SqliteStore(SqlStore):
    """A :class:`arena.storage.base.Store` in one SQLite file (or
    ``":memory:"`` for tests)."""

    def __init__(self, path: str | Path, *, read_pool_size: int = READ_POOL_SIZE,
                 node: str | None = None) -> None:
        db = SqliteDatabase(path, read_pool_size=read_pool_size)
        super().__init__(db, node=node)
        self.path = db.path
        try:
            self.migrated_from = migrate(db.tx, SQLITE, self.path)
        except BaseException:
            db.close()
            raise

    @property
    def _write(self) -> sqlite3.Connection:
        """The write connection (for checks such as ``PRAGMA integrity_check``)."""
        return self.db.write_connection  # type: ignore[attr-defined]
