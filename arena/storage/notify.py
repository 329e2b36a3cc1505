"""Publish/subscribe across arena nodes with PostgreSQL's LISTEN/NOTIFY.

Every node on one PostgreSQL database can tell the others that something
happened -- "match m7 has events up to seq 41", "match m7 finished" --
without anyone polling a table. A notification carries a small JSON
payload (PostgreSQL caps it at 8000 bytes), so it names what changed and the
receiver reads the rest from the store (``get_events(match_id, after_seq)``).

Publishing (:func:`publish`) runs in a store transaction: receivers hear of
it only once it is committed, and a notification sent in the same
transaction as the rows it names never arrives before them.

Receiving (:class:`Subscription`) uses its own asyncio connection. If that
connection is lost (PostgreSQL restarted) it reconnects with a growing
pause and yields a :class:`Resync`: notifications sent meanwhile are gone,
so the receiver re-reads what it shows.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass
from typing import Any, AsyncIterator

import structlog

from arena.storage.base import StorageError, Wire
from arena.storage.postgres import PostgresStore

log = structlog.get_logger(__name__)

MAX_PAYLOAD_BYTES = 7900  # PostgreSQL's limit is 8000, minus room for the channel name
_CHANNEL = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


class PayloadTooLargeError(StorageError):
    """A notification must stay small: publish a reference, not the data."""


@dataclass(frozen=True)
class Notice:
    channel: str
    data: Wire
    sender_pid: int  # the PostgreSQL backend that sent it (one per node connection)


@dataclass(frozen=True)
class Resync:
    """The subscription was reconnected: anything may have been missed."""

    channel: str


def _check_channel(channel: str) -> str:
    if not _CHANNEL.match(channel):
        raise StorageError(f"channel {channel!r} must be lower-case letters, digits and "
                           "underscores (a PostgreSQL identifier)")
    return channel


def encode(data: Wire) -> str:
    text = json.dumps(data, separators=(",", ":"), allow_nan=False)
    if len(text.encode()) > MAX_PAYLOAD_BYTES:
        raise PayloadTooLargeError(
            f"a notification of {len(text.encode())} bytes is over {MAX_PAYLOAD_BYTES}; "
            "publish what changed (ids, seqs) and let receivers read the store")
    return text


def publish(store: PostgresStore, channel: str, *messages: Wire) -> None:
    """Send ``messages`` on ``channel`` to every subscribed node, in one
    transaction of ``store``."""
    _check_channel(channel)
    payloads = [encode(m) for m in messages]
    if not payloads:
        return
    with store.db.tx() as db:
        db.executemany("SELECT pg_notify(?, ?)", [(channel, p) for p in payloads])


class Subscription:
    """``async for item in Subscription(url, "arena_live")``: Notice, or
    Resync after a reconnection. :meth:`close` ends the iteration."""

    def __init__(self, url: str, channel: str, *, max_pause_s: float = 5.0) -> None:
        self.url = url
        self.channel = _check_channel(channel)
        self.max_pause_s = max_pause_s
        self._conn: Any = None
        self._closed = False
        self.ready = asyncio.Event()  # set while LISTEN is in effect

    async def _connect(self) -> None:
        import psycopg

        self._conn = await psycopg.AsyncConnection.connect(self.url, autocommit=True)
        await self._conn.execute(f"LISTEN {self.channel}")
        self.ready.set()

    async def __aiter__(self) -> AsyncIterator[Notice | Resync]:
        import psycopg

        pause = 0.1
        first = True
        while not self._closed:
            try:
                if self._conn is None:
                    await self._connect()
                    if not first:
                        log.info("storage.notify_reconnected", channel=self.channel)
                        yield Resync(self.channel)
                    first = False
                    pause = 0.1
                async for note in self._conn.notifies():
                    try:
                        data = json.loads(note.payload)
                    except ValueError:
                        log.warning("storage.notify_unreadable", channel=note.channel)
                        continue
                    yield Notice(channel=note.channel, data=data, sender_pid=note.pid)
            except psycopg.Error as exc:
                if self._closed:
                    break
                self.ready.clear()
                log.warning("storage.notify_lost", channel=self.channel, error=str(exc),
                            retry_in_s=pause)
                await self._drop()
                await asyncio.sleep(pause)
                pause = min(pause * 2, self.max_pause_s)
                first = False

    async def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                await conn.close()
            except Exception:  # noqa: BLE001 - already broken
                pass

    async def close(self) -> None:
        self._closed = True
        self.ready.clear()
        await self._drop()
