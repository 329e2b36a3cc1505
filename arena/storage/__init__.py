"""Persistence: the :class:`Store` interface, its SQLite backend and the
async writer the server uses."""

from __future__ import annotations

from pathlib import Path

from arena.storage.base import (
    AlreadyExistsError,
    BotRecord,
    MatchRecord,
    MatchStatus,
    NotFoundError,
    ScheduledMatch,
    SeatFaults,
    StorageError,
    Store,
    StoredEvent,
    TournamentRecord,
    TournamentStatus,
)


def open_store(location: str | Path) -> Store:
    """Open the store named by a path or URL.

    ``sqlite:///relative/or/absolute.db``, ``sqlite://:memory:``, a plain
    file path or ``":memory:"`` open SQLite. Other schemes (``postgresql://``)
    are reserved for backends that do not exist yet and are refused clearly.
    """
    from arena.storage.sqlite import SqliteStore

    text = str(location)
    if "://" not in text:
        return SqliteStore(text)
    scheme, _, rest = text.partition("://")
    if scheme != "sqlite":
        raise StorageError(f"unsupported store URL scheme {scheme!r}; use a file path or "
                           "sqlite:///path.db")
    if rest in (":memory:", "/:memory:"):
        return SqliteStore(":memory:")
    # sqlite:///data/arena.db -> "data/arena.db"; sqlite:////abs/arena.db -> "/abs/arena.db"
    path = rest[1:] if rest.startswith("/") else rest
    if not path:
        raise StorageError(f"store URL {text!r} names no file")
    return SqliteStore(path)


__all__ = [
    "AlreadyExistsError", "BotRecord", "MatchRecord", "MatchStatus", "NotFoundError",
    "ScheduledMatch", "SeatFaults", "StorageError", "Store", "StoredEvent",
    "TournamentRecord", "TournamentStatus", "open_store",
]
