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
    """Messages, in order, in bundles of about ``limit`` bytes at most; an
    events message bigger than that is split, and a single event that is
    still too big is left out (the stored log has it)."""
    out: list[dict[str, Any]] = []
    current: list[dict[str, Any]] = []
    size = 0
    pending = list(reversed(messages))
    while pending:
        message = pending.pop()
        n = estimate(message)
        if n > limit:
            events = message.get("j") if message.get("t") == "ev" else None
            if events and len(events) > 1:
                half = len(events) // 2
                pending.append({**message, "j": events[half:]})
                pending.append({**message, "j": events[:half]})
            continue
        if size + n > limit and current:
            out.append({"n": node, "msgs": current})
            current, size = [], 0
        current.append(message)
        size += n
    if current:
        out.append({"n": node, "msgs": current})
    return out


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
