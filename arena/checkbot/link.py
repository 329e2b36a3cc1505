"""The checker's side of the wire: a listener and one bot connection.

Framing is the protocol package's sans-IO codec; this module only moves
bytes, with every wait bounded.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from typing import Any

from protocol.codec import Decoder, Encoding, encode
from protocol.errors import FrameError

READ_CHUNK = 65_536
MAX_PENDING_CONNECTIONS = 4


class LinkClosed(Exception):
    """The bot's connection ended (EOF, reset, or a frame we had to refuse)."""


class BotLink:
    """One accepted connection: decoded messages in, encoded messages out."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.connected_at = time.monotonic()
        self.decoder = Decoder.for_server()
        self._inbox: deque[dict[str, Any]] = deque()
        self.closed = False
        self.close_reason = ""

    @property
    def encoding(self) -> Encoding | None:
        return self.decoder.encoding

    async def receive(self, timeout: float) -> dict[str, Any] | None:
        """The next message, or None if none came within ``timeout`` seconds.

        Raises :class:`LinkClosed` when the bot closed the connection or sent
        bytes that are not protocol frames (which the checker answers with an
        ``error`` like the server would, then closes).
        """
        end = time.monotonic() + max(0.0, timeout)
        while not self._inbox:
            if self.closed:
                raise LinkClosed(self.close_reason or "connection closed")
            remaining = end - time.monotonic()
            if remaining <= 0:
                return None
            try:
                chunk = await asyncio.wait_for(self.reader.read(READ_CHUNK), remaining)
            except TimeoutError:
                return None
            except (ConnectionError, OSError) as exc:
                self._mark_closed(f"connection error: {exc}")
                continue
            if not chunk:
                self._mark_closed("the bot closed the connection")
                continue
            try:
                self._inbox.extend(self.decoder.feed(chunk))
            except FrameError as exc:
                await self.send({"type": "error", "code": str(exc.code), "message": exc.message})
                self._mark_closed(f"bad frame ({exc.code}): {exc.message}")
                self.close()
        return self._inbox.popleft()

    async def send(self, message: dict[str, Any]) -> None:
        if self.closed or self.writer.is_closing():
            return
        self.writer.write(encode(message, self.encoding or Encoding.MSGPACK))
        try:
            await asyncio.wait_for(self.writer.drain(), 5.0)
        except (ConnectionError, OSError, TimeoutError) as exc:
            self._mark_closed(f"could not send: {exc}")

    def _mark_closed(self, reason: str) -> None:
        if not self.closed:
            self.closed = True
            self.close_reason = reason

    def close(self) -> None:
        self._mark_closed("closed by the checker")
        if not self.writer.is_closing():
            self.writer.close()

    async def wait_closed(self) -> None:
        self.close()
        try:
            await asyncio.wait_for(self.writer.wait_closed(), 2.0)
        except (ConnectionError, OSError, TimeoutError):
            pass


class Listener:
    """A TCP server (127.0.0.1, a free port unless told) handing out connections."""

    def __init__(self) -> None:
        self._queue: asyncio.Queue[BotLink] = asyncio.Queue(MAX_PENDING_CONNECTIONS)
        self._server: asyncio.Server | None = None
        self.links: list[BotLink] = []
        self.port = 0

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> int:
        """Listen on ``host:port`` (0: a free port); returns the port."""
        self._server = await asyncio.start_server(self._accept, host, port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self.port

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        link = BotLink(reader, writer)
        if self._queue.full():
            # A bot opening connection after connection gets no more seats.
            writer.close()
            return
        self.links.append(link)
        self._queue.put_nowait(link)

    async def next_link(self, timeout: float) -> BotLink | None:
        try:
            return await asyncio.wait_for(self._queue.get(), timeout)
        except TimeoutError:
            return None

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for link in self.links:
            await link.wait_closed()
        if self._server is not None:
            await self._server.wait_closed()
