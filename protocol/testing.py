"""Test helper: a scripted in-process server a test drives message by message.

::

    async with ScriptedServer() as server:
        client_task = asyncio.create_task(client.run())
        conn = await server.accept()
        hello = await conn.handshake()
        await conn.send(request)
        answer = await conn.receive()

It speaks the real framing (either encoding, detected like the arena does)
on 127.0.0.1 with a free port, and every wait has a timeout so a broken
client fails the test instead of hanging it.
"""

from __future__ import annotations

import asyncio
from typing import Any

from protocol.codec import Decoder, Encoding, encode
from protocol.messages import PROTOCOL_VERSION, Welcome
from protocol.sdk.connection import close_writer

DEFAULT_TIMEOUT_S = 5.0


class ScriptedConnection:
    """The server's end of one client connection."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.decoder = Decoder.for_server()

    @property
    def encoding(self) -> Encoding:
        return self.decoder.encoding or Encoding.MSGPACK

    async def receive(self, timeout: float = DEFAULT_TIMEOUT_S) -> dict[str, Any] | None:
        """The next message from the client, or None when it closed (a reset
        counts as closed: a client that closes with unread bytes resets)."""
        async with asyncio.timeout(timeout):
            while True:
                message = self.decoder.next_message()
                if message is not None:
                    return message
                try:
                    data = await self.reader.read(65_536)
                except ConnectionResetError:
                    return None
                if not data:
                    return None
                self.decoder.receive_data(data)

    async def expect(self, type_name: str, timeout: float = DEFAULT_TIMEOUT_S) -> dict[str, Any]:
        message = await self.receive(timeout)
        if message is None or message.get("type") != type_name:
            raise AssertionError(f"expected a {type_name!r} message, got {message!r}")
        return message

    async def send(self, message: Any) -> None:
        wire = message.to_wire() if hasattr(message, "to_wire") else message
        self.writer.write(encode(wire, self.encoding))
        await self.writer.drain()

    async def send_raw(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def handshake(self, bot: str = "bot", server: str = "scripted/1") -> dict[str, Any]:
        """Read the hello, answer welcome; returns the hello."""
        hello = await self.expect("hello")
        await self.send(Welcome(PROTOCOL_VERSION, bot, server))
        return hello

    async def close(self) -> None:
        await close_writer(self.writer)


class ScriptedServer:
    """Accepts connections on a free port and hands them to the test."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.host = host
        self.port = 0
        self._server: asyncio.Server | None = None
        self._accepted: asyncio.Queue[ScriptedConnection] = asyncio.Queue()
        self._connections: list[ScriptedConnection] = []

    async def __aenter__(self) -> "ScriptedServer":
        self._server = await asyncio.start_server(self._on_connect, self.host, 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        for conn in self._connections:
            await conn.close()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _on_connect(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conn = ScriptedConnection(reader, writer)
        self._connections.append(conn)
        await self._accepted.put(conn)

    async def accept(self, timeout: float = DEFAULT_TIMEOUT_S) -> ScriptedConnection:
        return await asyncio.wait_for(self._accepted.get(), timeout)
