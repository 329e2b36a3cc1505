"""Is there an arena store at this location? -- asked without creating one.

:func:`arena.storage.open_store` creates a missing SQLite file and the tables
of an empty PostgreSQL database: right for ``arena serve`` or ``arena bots
add``, wrong for a command that reads or changes what is already there
(``arena tournament cancel``, ``arena verify``, ``arena export``...). There a
typo in ``--db`` would leave an empty store behind and report "no such
tournament" about the wrong place. Those commands call
:func:`require_existing_store` first.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from arena.storage.base import StorageError

# Every schema version has this table (schema.migrate creates it first).
SCHEMA_TABLE = "schema_version"
MEMORY_LOCATIONS = (":memory:", "sqlite://:memory:", "sqlite:///:memory:")
POSTGRES_SCHEMES = ("postgresql", "postgres")


def is_postgres_url(location: str | Path) -> bool:
    return str(location).partition("://")[0] in POSTGRES_SCHEMES and "://" in str(location)


class NoStoreError(StorageError):
    """The location holds no arena store, and the command will not create one."""


def store_file(location: str | Path) -> Path | None:
    """The SQLite file a store location names, or None when it names no file
    (``:memory:``, a PostgreSQL URL)."""
    text = str(location)
    if text in MEMORY_LOCATIONS:
        return None
    if "://" in text:
        scheme, _, rest = text.partition("://")
        if scheme != "sqlite":
            return None
        text = rest[1:] if rest.startswith("/") else rest
    return Path(text)


def require_existing_store(location: str | Path, *, hint: str = "") -> None:
    """Raise :class:`NoStoreError` unless ``location`` holds an arena store:
    a SQLite file, or a PostgreSQL database, with the arena's schema in it.
    Nothing is created or changed either way. ``:memory:`` passes (it is
    always new; the caller asked for exactly that).

    ``hint`` ends the message: what the user should check or run instead.
    """
    text = str(location)
    tail = f": {hint}" if hint else ""
    if is_postgres_url(text):
        from arena.storage.postgres import describe, has_arena_schema

        if not has_arena_schema(text):
            raise NoStoreError(f"no arena store in the database {describe(text)} "
                               f"(it has no arena tables; none were created){tail}")
        return
    path = store_file(text)
    if path is None:
        return
    if not path.is_file():
        raise NoStoreError(f"no arena store at {text} (no such file; none was created){tail}")
    if not _sqlite_has_schema(path):
        raise NoStoreError(f"no arena store at {text} (the file has no arena tables; "
                           f"nothing was written to it){tail}")


def _sqlite_has_schema(path: Path) -> bool:
    # Read-only: an arena command must not add tables to someone else's file.
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise StorageError(f"cannot open {path}: {exc}") from exc
    try:
        row = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                           (SCHEMA_TABLE,)).fetchone()
    except sqlite3.DatabaseError as exc:  # "file is not a database"
        raise NoStoreError(f"{path} is not an arena store: {exc}") from exc
    finally:
        conn.close()
    return row is not None
