"""The common case of the receive path, one small ``action`` frame, is short.

A server at many tables handles an action per decision: what a connection
runs between the bytes and its host's ``action_received`` is paid each
time, so it is held to a budget of Python calls here (counted, not timed:
the count does not drift with the machine's load). Every check still runs:
the conformance tests hold the same connection to the protocol's rules.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from arena.server.connection import BotConnection, Identity
from protocol.codec import Encoding, decode_one, encode
from protocol.messages import Action, Hello

ROOT = Path(__file__).resolve().parents[2]
# Calls of the connection layer: the connection, the codec, the messages.
COUNTED = (str(ROOT / "protocol"), str(ROOT / "arena" / "server" / "connection.py"), "<string>")
CALL_BUDGET = 10


class Host:
    def __init__(self) -> None:
        self.actions: list[Action] = []

    def connection_opened(self, conn: BotConnection) -> None:
        return None

    def authenticate(self, hello: Hello, conn: BotConnection) -> Identity:
        return Identity(bot=hello.name or "bot", token_hash="h")

    def connection_ready(self, conn: BotConnection) -> None:
        pass

    def action_received(self, conn: BotConnection, match: str, request_id: int,
                        action: Any) -> None:
        self.actions.append(Action(match, request_id, action))

    def connection_alive(self, conn: BotConnection) -> None:
        pass

    def connection_closed(self, conn: BotConnection) -> None:
        pass


class Transport(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.written: list[bytes] = []

    def write(self, data: Any) -> None:
        self.written.append(bytes(data))

    def get_write_buffer_size(self) -> int:
        return 0

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        pass  # nothing is ever buffered here

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return ("127.0.0.1", 1) if name == "peername" else default

    def is_closing(self) -> bool:
        return False

    def close(self) -> None:
        pass


def _connected(encoding: Encoding, **limits: Any) -> tuple[BotConnection, Host]:
    host = Host()
    options = {"rate_per_s": 1000, "rate_burst": 1000, "rate_strikes": 3, **limits}
    conn = BotConnection(host, hello_timeout_s=5, max_write_buffer=1 << 20, server_name="test",
                         **options)
    conn.connection_made(Transport())
    conn.data_received(encode({"type": "hello", "protocol": 1, "token": "t", "name": "b"}, encoding))
    assert conn.identity is not None
    return conn, host


def _calls_while(conn: BotConnection, data: bytes) -> list[str]:
    calls: list[str] = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code.co_filename.startswith(COUNTED):
            calls.append(frame.f_code.co_name)

    sys.setprofile(profile)
    try:
        conn.data_received(data)
    finally:
        sys.setprofile(None)
    return calls


async def test_one_msgpack_action_reaches_the_host_within_the_call_budget():
    conn, host = _connected(Encoding.MSGPACK)
    frame = encode({"type": "action", "match": "m-1", "id": 7, "action": ["JH", "TS"]},
                   Encoding.MSGPACK)
    calls = _calls_while(conn, frame)
    assert host.actions == [Action("m-1", 7, ["JH", "TS"])]
    assert len(calls) <= CALL_BUDGET, calls


async def test_one_json_action_reaches_the_host_within_the_call_budget():
    conn, host = _connected(Encoding.JSONL)
    line = encode({"type": "action", "match": "m-1", "id": 7, "action": "AS"}, Encoding.JSONL)
    calls = _calls_while(conn, line)
    assert host.actions == [Action("m-1", 7, "AS")]
    assert len(calls) <= CALL_BUDGET + 2, calls


async def test_actions_split_and_joined_across_reads_arrive_in_order():
    conn, host = _connected(Encoding.MSGPACK)
    data = b"".join(encode({"type": "action", "match": "m", "id": i, "action": i}, Encoding.MSGPACK)
                    for i in range(5))
    for start in range(0, len(data), 7):
        conn.data_received(data[start:start + 7])
    assert [a.id for a in host.actions] == [0, 1, 2, 3, 4]


async def test_a_whole_plain_action_is_read_in_one_piece_without_the_decoder():
    conn, host = _connected(Encoding.MSGPACK)
    frame = encode({"type": "action", "match": "m-1", "id": 7, "action": "QH"}, Encoding.MSGPACK)
    calls = _calls_while(conn, frame)
    assert host.actions == [Action("m-1", 7, "QH")]
    assert {"receive_data", "next_message", "action_fields"}.isdisjoint(calls), calls


async def test_a_read_handed_over_as_a_bytearray_is_read_by_the_decoder():
    conn, host = _connected(Encoding.MSGPACK)
    frame = encode({"type": "action", "match": "m-1", "id": 7, "action": "QH"}, Encoding.MSGPACK)
    conn.data_received(bytearray(frame))  # type: ignore[arg-type]
    assert host.actions == [Action("m-1", 7, "QH")]
    assert not conn.closed


async def test_plain_and_split_reads_interleaved_arrive_in_order():
    conn, host = _connected(Encoding.MSGPACK)

    def action(i: int, answer: Any) -> bytes:
        return encode({"type": "action", "match": "m", "id": i, "action": answer}, Encoding.MSGPACK)

    conn.data_received(action(0, "7S") + action(1, None))  # whole: read in one piece
    split = action(2, ["QH"]) + action(3, 3)  # an int answer is the decoder's to read
    conn.data_received(split[:5])
    conn.data_received(split[5:] + action(4, "AD")[:2])  # the decoder holds the rest
    conn.data_received(action(4, "AD")[2:])
    conn.data_received(action(5, "TC"))
    assert [(a.id, a.action) for a in host.actions] == [
        (0, "7S"), (1, None), (2, ["QH"]), (3, 3), (4, "AD"), (5, "TC")]


async def test_plain_actions_count_against_the_rate_limit():
    conn, host = _connected(Encoding.MSGPACK, rate_per_s=0.001, rate_burst=3, rate_strikes=2,
                            linger_s=0)
    frames = b"".join(encode({"type": "action", "match": "m", "id": i, "action": "7S"},
                             Encoding.MSGPACK) for i in range(6))
    conn.data_received(frames)
    # The hello took one token: two actions pass, the next two are strikes,
    # the second of which closes the connection; the rest are not read.
    assert [a.id for a in host.actions] == [0, 1]
    assert conn.closed
    # The first write is the welcome.
    written = conn.transport.written[1:]  # type: ignore[union-attr]
    errors = [decode_one(data, Encoding.MSGPACK) for data in written]
    assert [e["code"] for e in errors] == ["rate_limited", "rate_limited"]
