"""A reader that falls too far behind is dropped, with the reason queued
behind what it has not read (docs/reliability.md: 4 MiB by default)."""

from __future__ import annotations

import asyncio
import socket

from arena.server.connection import BotConnection
from protocol.codec import Decoder, Encoding, encode
from protocol.errors import ErrorCode

from .test_connection_receive_path import Host

CAP = 256 * 1024  # not asyncio's default high-water mark (64 KiB)


async def _pair() -> tuple[BotConnection, socket.socket]:
    """A connection over a real socket whose far end reads nothing until told."""
    ours, theirs = socket.socketpair()
    for sock in (ours, theirs):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    conn = BotConnection(Host(), hello_timeout_s=5, max_write_buffer=CAP, rate_per_s=100,
                         rate_burst=100, rate_strikes=3, server_name="test", linger_s=5)
    await asyncio.get_running_loop().connect_accepted_socket(lambda: conn, ours)
    conn.data_received(encode({"type": "hello", "protocol": 1, "token": "t", "name": "b"},
                              Encoding.MSGPACK))
    assert conn.identity is not None
    return conn, theirs


class Reader:
    """The far end's reads, decoded as they come (one decoder for the whole
    stream: a frame may be cut between two reads)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.decoder = Decoder.for_client(Encoding.MSGPACK)
        self.messages: list[dict] = []

    def read_available(self) -> None:
        self.sock.setblocking(False)
        while True:
            try:
                chunk = self.sock.recv(1 << 16)
            except BlockingIOError:
                break
            if not chunk:
                break
            self._take(chunk)

    def read_to_eof(self, timeout_s: float = 10.0) -> None:
        self.sock.setblocking(True)
        self.sock.settimeout(timeout_s)
        while chunk := self.sock.recv(1 << 16):
            self._take(chunk)

    def _take(self, chunk: bytes) -> None:
        self.decoder.receive_data(chunk)
        while (message := self.decoder.next_message()) is not None:
            self.messages.append(message)


async def test_a_reader_past_the_cap_is_dropped_with_the_reason_last():
    conn, theirs = await _pair()
    event = encode({"type": "event", "match": "m", "event": {"kind": "x", "pad": "p" * 1000}},
                   Encoding.MSGPACK)
    sent = 0
    try:
        while not conn.closed and sent < 50 * CAP:
            conn.send_bytes(event)
            sent += len(event)
        assert conn.closed, "a reader that reads nothing was never dropped"
        # Dropped once the unread bytes passed the cap, not long before or after.
        assert CAP < sent < 4 * CAP, sent
        conn.send_bytes(event)  # after the drop: nothing more is queued
        reader = Reader(theirs)  # the server half-closes after the error: read to the end
        await asyncio.get_running_loop().run_in_executor(None, reader.read_to_eof)
        messages = reader.messages
        assert messages[0]["type"] == "welcome"
        last = messages[-1]
        assert last["type"] == "error" and last["code"] == ErrorCode.RATE_LIMITED.value
        assert f"more than {CAP} bytes" in last["message"] and "reads too slowly" in last["message"]
        # Every event written before the drop arrives, none written after.
        assert sum(m["type"] == "event" for m in messages) == sent // len(event)
    finally:
        conn.abort()
        theirs.close()


async def test_a_reader_that_keeps_up_is_never_dropped():
    conn, theirs = await _pair()
    event = encode({"type": "event", "match": "m", "event": {"kind": "x", "pad": "p" * 1000}},
                   Encoding.MSGPACK)
    loop = asyncio.get_running_loop()
    reader = Reader(theirs)
    try:
        for _ in range(20):  # 20 rounds of half the cap, each read before the next
            for _ in range(CAP // 2 // len(event)):
                conn.send_bytes(event)
            await asyncio.sleep(0.01)
            while conn.transport is not None and conn.transport.get_write_buffer_size():
                await loop.run_in_executor(None, reader.read_available)
                await asyncio.sleep(0.005)
            await loop.run_in_executor(None, reader.read_available)
        assert not conn.closed
        assert all(m["type"] != "error" for m in reader.messages)
        assert sum(m["type"] == "event" for m in reader.messages) == \
            20 * (CAP // 2 // len(event))
    finally:
        conn.abort()
        theirs.close()
