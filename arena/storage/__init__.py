"""Persistence: the :class:`Store` interface, its two backends and the async
writer the server uses.

* :mod:`arena.storage.base` -- the interface, records and errors;
* :mod:`arena.storage.schema` -- the one schema and its migrations, and the
  SQL dialect differences;
* :mod:`arena.storage.connections` -- connections and transactions
  (SQLite; PostgreSQL's in :mod:`arena.storage.postgres`);
* :mod:`arena.storage.events` -- the append-only event log;
* :mod:`arena.storage.store` -- bots, matches, tournaments;
* :mod:`arena.storage.queue` -- slots as a queue shared by several nodes;
* :mod:`arena.storage.sqlite` / :mod:`arena.storage.postgres` -- the two
  backends: SQLite (embedded, the default) and PostgreSQL (shared);
* :mod:`arena.storage.notify` -- publish/subscribe across nodes (PostgreSQL);
* :mod:`arena.storage.transfer` -- ``arena db migrate`` and ``arena db copy``;
* :mod:`arena.storage.writer` -- the writer thread between the loop and a store;
* :mod:`arena.storage.deal_keys` -- secret deal keys, in files next to the
  database (never in it);
* :mod:`arena.storage.existing` -- is there a store at a location, asked
  without creating one (for commands that must not).

It imports only the bottom layer (games, protocol, :mod:`arena.records`).

Errors::

    StorageError
    ├── NotFoundError (LookupError)  no such bot, match or tournament
    ├── AlreadyExistsError           the name or id is taken
    ├── SlotTakenError               a tournament slot already has its match
    ├── WriterClosedError            a call after the writer closed
    ├── EventLogError                a match's log is incomplete: it must not finish
    ├── PayloadTooLargeError         a notification too big to publish
    ├── CopyMismatchError            ``arena db copy`` did not copy faithfully
    ├── DestinationNotEmptyError     ``arena db copy`` into a used store
    ├── NoStoreError                 no arena store where a command needs one
    └── KeyringError                 a deal key is missing or does not match
"""

from __future__ import annotations

import os
from pathlib import Path

from arena.storage.base import (
    AlreadyExistsError,
    BotRecord,
    MatchRecord,
    MatchStatus,
    NotFoundError,
    ScheduledMatch,
    SeatFaults,
    SlotTakenError,
    StorageError,
    Store,
    StoredEvent,
    TournamentRecord,
    TournamentStatus,
)
from arena.storage.existing import (
    POSTGRES_SCHEMES, NoStoreError, is_postgres_url, require_existing_store, store_file,
)


NODE_ENV = "ARENA_NODE"


def open_store(location: str | Path, *, node: str | None = None) -> Store:
    """Open the store named by a path or URL (what every ``--db`` takes).

    ``postgresql://user@host:port/dbname`` (or ``postgres://``) opens
    PostgreSQL; ``sqlite:///relative/or/absolute.db``, ``sqlite://:memory:``,
    a plain file path or ``":memory:"`` open SQLite. The schema is created or
    migrated on open.

    ``node`` (default: the ``ARENA_NODE`` environment variable) names the
    arena node using the store. Nodes sharing one PostgreSQL database need
    distinct names: a node starting up then aborts only its own unfinished
    matches, not those other nodes are playing.
    """
    text = str(location)
    node = node if node is not None else (os.environ.get(NODE_ENV) or None)
    if is_postgres_url(text):
        from arena.storage.postgres import PostgresStore

        return PostgresStore(text, node=node)
    from arena.storage.sqlite import SqliteStore

    if "://" not in text:
        return SqliteStore(text, node=node)
    scheme, _, rest = text.partition("://")
    if scheme != "sqlite":
        raise StorageError(f"unsupported store URL scheme {scheme!r}; use a file path, "
                           "sqlite:///path.db or postgresql://host/dbname")
    if rest in (":memory:", "/:memory:"):
        return SqliteStore(":memory:", node=node)
    # sqlite:///data/arena.db -> "data/arena.db"; sqlite:////abs/arena.db -> "/abs/arena.db"
    path = rest[1:] if rest.startswith("/") else rest
    if not path:
        raise StorageError(f"store URL {text!r} names no file")
    return SqliteStore(path, node=node)


__all__ = [
    "AlreadyExistsError", "BotRecord", "MatchRecord", "MatchStatus", "NotFoundError",
    "NoStoreError", "ScheduledMatch", "SeatFaults", "SlotTakenError", "StorageError", "Store",
    "StoredEvent", "TournamentRecord", "TournamentStatus", "is_postgres_url", "open_store",
    "require_existing_store", "store_file",
]
