"""A hand-driven bot for server tests: send exactly what a test says."""

from __future__ import annotations

import asyncio
from typing import Any, Callable

from protocol.codec import Decoder, Encoding, encode

TIMEOUT_S = 10.0


class RawBot:
    def __init__(self, encoding: Encoding = Encoding.MSGPACK) -> None:
        self.encoding = encoding
        self.decoder = Decoder.for_client(encoding)
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.seen: list[dict[str, Any]] = []

    async def connect(self, port: int) -> "RawBot":
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", port)
        return self

    async def hello(self, token: str = "t", name: str | None = "raw") -> dict[str, Any]:
        message: dict[str, Any] = {"type": "hello", "protocol": 1, "token": token}
        if name is not None:
            message["name"] = name
        await self.send(message)
        return await self.recv()

    async def send(self, message: dict[str, Any]) -> None:
        await self.send_raw(encode(message, self.encoding))

    async def send_raw(self, data: bytes) -> None:
        assert self.writer is not None
        self.writer.write(data)
        await self.writer.drain()

    async def recv(self, timeout: float = TIMEOUT_S) -> dict[str, Any] | None:
        """The next message, or None once the server closed the connection."""
        assert self.reader is not None
        async with asyncio.timeout(timeout):
            while True:
                message = self.decoder.next_message()
                if message is not None:
                    self.seen.append(message)
                    return message
                try:
                    data = await self.reader.read(65536)
                except ConnectionError:
                    return None
                if not data:
                    return None
                self.decoder.receive_data(data)

    async def until(self, predicate: Callable[[dict[str, Any]], bool],
                    timeout: float = TIMEOUT_S) -> dict[str, Any]:
        async with asyncio.timeout(timeout):
            while True:
                message = await self.recv(timeout)
                if message is None:
                    raise ConnectionError("server closed the connection")
                if predicate(message):
                    return message

    async def request(self, phase: str | None = None, timeout: float = TIMEOUT_S) -> dict[str, Any]:
        return await self.until(lambda m: m["type"] == "request"
                                and (phase is None or m["phase"] == phase), timeout)

    async def asked(self, phase: str, timeout: float = TIMEOUT_S) -> dict[str, Any]:
        """The first request for ``phase``, answering others (first legal) on
        the way: the deal decides whether a seat is asked to decide at all."""
        async with asyncio.timeout(timeout):
            while True:
                message = await self.request(timeout=timeout)
                if message["phase"] == phase:
                    return message
                await self.answer(message, message["legal"][0])

    async def event(self, kind: str, timeout: float = TIMEOUT_S) -> dict[str, Any]:
        message = await self.until(lambda m: m["type"] == "event" and m["event"]["kind"] == kind,
                                   timeout)
        return message["event"]

    async def answer(self, request: dict[str, Any], action: Any) -> None:
        await self.send({"type": "action", "match": request["match"], "id": request["id"],
                         "action": action})

    async def play_to_end(self, choose: Callable[[dict[str, Any]], Any] | None = None,
                          timeout: float = 60.0) -> dict[str, Any]:
        """Answer every request (first legal by default) until match_end."""
        async with asyncio.timeout(timeout):
            while True:
                message = await self.recv(timeout)
                if message is None:
                    raise ConnectionError("server closed the connection")
                if message["type"] == "request":
                    await self.answer(message, choose(message) if choose else message["legal"][0])
                elif message["type"] == "match_end":
                    return message

    async def close(self) -> None:
        if self.writer is not None and not self.writer.is_closing():
            self.writer.close()
            try:
                await asyncio.wait_for(self.writer.wait_closed(), 2)
            except (OSError, TimeoutError):
                pass
