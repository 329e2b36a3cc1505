"""A bot-side wire client written from the protocol page alone.

It deliberately does not use the project's own codec: a conformance bot only
knows the page, so this client frames and decodes by the page's words and
fails (``WireViolation``) on anything the server sends that breaks them:

* msgpack: 4-byte big-endian N, 1 <= N <= 1 MiB, exactly one map;
* JSON Lines: one ``\\n``-terminated UTF-8 JSON object per line, <= 1 MiB;
* values are only maps (string keys), arrays, strings, integers, booleans
  and null; every message has a string ``type``.
"""

from __future__ import annotations

import asyncio
import json
import struct
from typing import Any, Callable

import msgpack

MSGPACK = "msgpack"
JSONL = "jsonl"
ENCODINGS = (MSGPACK, JSONL)

MAX_BOT_FRAME = 65_536
MAX_SERVER_FRAME = 1 << 20
WAIT_S = 10.0

Message = dict[str, Any]


class WireViolation(AssertionError):
    """The server sent bytes the protocol page does not allow."""


def check_values(value: Any, where: str = "message") -> None:
    """Only the value kinds of protocol §1, all the way down."""
    stack: list[tuple[Any, str]] = [(value, where)]
    while stack:
        item, path = stack.pop()
        if isinstance(item, dict):
            for key, sub in item.items():
                if not isinstance(key, str):
                    raise WireViolation(f"{path}: map key {key!r} is not a string")
                stack.append((sub, f"{path}.{key}"))
        elif isinstance(item, list):
            stack.extend((sub, f"{path}[{i}]") for i, sub in enumerate(item))
        elif item is None or isinstance(item, (str, bool, int)):
            continue
        else:
            raise WireViolation(f"{path}: {type(item).__name__} {item!r:.40} is not a protocol value")


def encode(message: Any, encoding: str) -> bytes:
    """One frame or line as a bot would write it (no checks: tests send junk too)."""
    if encoding == MSGPACK:
        body = msgpack.packb(message, use_bin_type=True)
        return struct.pack(">I", len(body)) + body
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def body_size(message: Any, encoding: str) -> int:
    """Bytes the limit counts: the msgpack body, or the line without ``\\n``."""
    data = encode(message, encoding)
    return len(data) - 4 if encoding == MSGPACK else len(data) - 1


def padded(message: Message, size: int, encoding: str) -> Message:
    """``message`` plus an unknown ``pad`` field, exactly ``size`` bytes long."""
    pad = max(0, size - body_size({**message, "pad": ""}, encoding))
    for _ in range(8):  # string headers grow at 32 / 256 / 65536 bytes
        candidate = {**message, "pad": "x" * pad}
        have = body_size(candidate, encoding)
        if have == size:
            return candidate
        pad += size - have
    raise ValueError(f"cannot pad {message!r:.60} to exactly {size} bytes")


class SpecBot:
    """A hand-driven bot: tests say exactly what it sends and check what comes."""

    def __init__(self, encoding: str = MSGPACK) -> None:
        self.encoding = encoding
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.seen: list[Message] = []
        self.eof = False

    async def connect(self, port: int, source: str | None = None) -> "SpecBot":
        """``source``: another loopback address to connect from (127.0.0.2 ...),
        to be another address to the server's per-address limits."""
        self.reader, self.writer = await asyncio.open_connection(
            "127.0.0.1", port, limit=MAX_SERVER_FRAME + 2,
            local_addr=(source, 0) if source is not None else None)
        return self

    async def hello(self, token: str = "t", name: str | None = "spec", **extra: Any) -> Message | None:
        message: Message = {"type": "hello", "protocol": 1, "token": token, **extra}
        if name is not None:
            message["name"] = name
        await self.send(message)
        return await self.recv()

    async def send(self, message: Any) -> None:
        await self.send_raw(encode(message, self.encoding))

    async def send_raw(self, data: bytes) -> None:
        assert self.writer is not None
        self.writer.write(data)
        await self.writer.drain()

    async def _read_one(self) -> Message | None:
        assert self.reader is not None
        try:
            if self.encoding == MSGPACK:
                head = await self.reader.readexactly(4)
                (size,) = struct.unpack(">I", head)
                if not 1 <= size <= MAX_SERVER_FRAME:
                    raise WireViolation(f"server frame length {size} is outside 1..{MAX_SERVER_FRAME}")
                body = await self.reader.readexactly(size)
                try:
                    value = msgpack.unpackb(body, raw=False, strict_map_key=False)
                except Exception as exc:
                    raise WireViolation(f"server frame is not one msgpack value: {exc}") from None
            else:
                try:
                    line = await self.reader.readuntil(b"\n")
                except asyncio.IncompleteReadError as exc:
                    if exc.partial:
                        raise WireViolation(f"server closed mid-line: {exc.partial[:80]!r}") from None
                    raise
                if len(line) - 1 > MAX_SERVER_FRAME:
                    raise WireViolation(f"server line of {len(line) - 1} bytes")
                try:
                    value = json.loads(line[:-1].decode("utf-8"))
                except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                    raise WireViolation(f"server line is not UTF-8 JSON: {exc}") from None
        except (asyncio.IncompleteReadError, ConnectionError):
            self.eof = True
            return None
        if not isinstance(value, dict):
            raise WireViolation(f"server message is not a map: {value!r:.80}")
        check_values(value)
        if not isinstance(value.get("type"), str):
            raise WireViolation(f"server message without a string type: {value!r:.80}")
        return value

    async def recv(self, timeout: float = WAIT_S) -> Message | None:
        """The next message, or None once the server has closed the connection."""
        if self.eof:
            return None
        async with asyncio.timeout(timeout):
            message = await self._read_one()
        if message is not None:
            self.seen.append(message)
        return message

    async def until(self, predicate: Callable[[Message], bool], timeout: float = WAIT_S) -> Message:
        async with asyncio.timeout(timeout):
            while True:
                message = await self.recv(timeout)
                if message is None:
                    raise ConnectionError("server closed the connection")
                if predicate(message):
                    return message

    async def request(self, phase: str | None = None, timeout: float = WAIT_S) -> Message:
        return await self.until(lambda m: m["type"] == "request"
                                and (phase is None or m["phase"] == phase), timeout)

    async def asked(self, phase: str, timeout: float = WAIT_S) -> Message:
        """The first request for ``phase``; requests of other phases on the
        way get their first legal action. Which phase comes first depends on
        the deal (a dealer may be made to enter unasked), so a test that needs
        one phase must not merely wait for it: the requests it skipped would
        time out and put the seat on autopilot."""
        async with asyncio.timeout(timeout):
            while True:
                message = await self.request(timeout=timeout)
                if message["phase"] == phase:
                    return message
                await self.answer(message, message["legal"][0])

    async def event(self, kind: str, timeout: float = WAIT_S, **fields: Any) -> Message:
        def wanted(m: Message) -> bool:
            return (m["type"] == "event" and m["event"]["kind"] == kind
                    and all(m["event"].get(k) == v for k, v in fields.items()))
        return (await self.until(wanted, timeout))["event"]

    async def error(self, timeout: float = WAIT_S) -> Message:
        return await self.until(lambda m: m["type"] == "error", timeout)

    async def answer(self, request: Message, action: Any, **extra: Any) -> None:
        await self.send({"type": "action", "match": request["match"], "id": request["id"],
                         "action": action, **extra})

    async def closed_after(self, timeout: float = WAIT_S) -> list[Message]:
        """Read until the server closes; the messages that came first."""
        got: list[Message] = []
        async with asyncio.timeout(timeout):
            while (message := await self.recv(timeout)) is not None:
                got.append(message)
        return got

    async def play_to_end(self, choose: Callable[[Message], Any] | None = None,
                          timeout: float = 60.0) -> Message:
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
