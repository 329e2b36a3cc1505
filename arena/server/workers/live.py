"""The local transports of the live bridge (``arena.live_bridge``) between
the workers and their parent: a worker only sends, over its channel; the
parent only hears, from every worker's channel.

Bundles are packed by size estimate (the events' JSON texts are the bulk),
not by measuring each message as NOTIFY must, and are far bigger than a
notification: a worker sends one or two messages per flush.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from arena.live_bridge import bundles
from arena.server.workers.channel import MAX_MESSAGE_BYTES, Channel, ChannelClosedError
from arena.storage.base import StorageError

# Estimated bytes of a bundle before a new one is started; the estimate
# (texts plus a fixed allowance per message) stays below the channel's
# limit with room for the envelope.
_BUNDLE_ESTIMATE = MAX_MESSAGE_BYTES // 2
_PER_MESSAGE = 64


def estimate(message: dict[str, Any]) -> int:
    if message.get("t") == "ev":
        return _PER_MESSAGE + sum(len(text) + 4 for text in message.get("j", ()))
    return _PER_MESSAGE + sum(len(str(v)) for v in message.values())


def pack(node: str, messages: list[dict[str, Any]],
         limit: int = _BUNDLE_ESTIMATE) -> list[dict[str, Any]]:
    """Messages, in order, in bundles of about ``limit`` bytes at most (the
    bridge's own packing, by estimate instead of measured JSON)."""
    return bundles(node, messages, limit, size_of=estimate)


class WorkerTransport:
    """A worker's half: its bundles go to the parent as ``live`` messages."""

    sends = True
    hears = False

    def __init__(self, channel: Channel) -> None:
        self.channel = channel

    async def open(self, node: str) -> None:
        return None

    def pack(self, node: str, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return pack(node, messages)

    async def publish(self, payloads: list[dict[str, Any]]) -> None:
        try:
            for payload in payloads:
                self.channel.send({"t": "live", "p": payload})
        except ChannelClosedError as exc:
            raise StorageError(f"live bridge to the parent: {exc}") from None

    async def incoming(self) -> AsyncIterator[Any]:  # pragma: no cover - never heard
        return
        yield

    async def ready(self) -> None:
        return None

    async def close(self) -> None:
        return None


class ParentTransport:
    """The parent's half: the workers' ``live`` payloads, in arrival order
    (:meth:`deliver` is called by the pool for each)."""

    sends = False
    hears = True

    def __init__(self) -> None:
        self._queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()

    def deliver(self, payload: dict[str, Any]) -> None:
        self._queue.put_nowait(payload)

    async def open(self, node: str) -> None:
        return None

    def pack(self, node: str, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return pack(node, messages)

    async def publish(self, payloads: list[dict[str, Any]]) -> None:
        return None

    async def incoming(self) -> AsyncIterator[Any]:
        while (payload := await self._queue.get()) is not None:
            yield payload

    async def ready(self) -> None:
        return None

    async def close(self) -> None:
        self._queue.put_nowait(None)
