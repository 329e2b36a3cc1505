"""A bot's end of one TCP connection: bytes between a stream pair and the codec."""

from __future__ import annotations

import asyncio
from typing import Any

from protocol.codec import Decoder, Encoding, encode
from protocol.messages import MAX_BOT_FRAME

_READ_CHUNK = 65_536


async def close_writer(writer: asyncio.StreamWriter, timeout_s: float = 1.0) -> None:
    """Close a stream and wait (bounded) until it is closed; errors on the
    way out do not matter any more."""
    if not writer.is_closing():
        writer.close()
    try:
        async with asyncio.timeout(timeout_s):
            await writer.wait_closed()
    except (OSError, TimeoutError):
        pass


class Connection:
    """Moves bytes between a stream pair and the sans-IO codec."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, encoding: Encoding) -> None:
        self.reader = reader
        self.writer = writer
        self.encoding = encoding
        self.decoder = Decoder.for_client(encoding)

    async def receive(self) -> dict[str, Any] | None:
        """The next message, or None at end of stream."""
        while True:
            message = self.decoder.next_message()
            if message is not None:
                return message
            data = await self.reader.read(_READ_CHUNK)
            if not data:
                return None
            self.decoder.receive_data(data)

    def send_nowait(self, message: dict[str, Any]) -> None:
        if not self.writer.is_closing():
            self.writer.write(encode(message, self.encoding, limit=MAX_BOT_FRAME))

    async def send(self, message: dict[str, Any]) -> None:
        self.send_nowait(message)
        await self.writer.drain()

    async def close(self) -> None:
        await close_writer(self.writer)
