"""Protocol §5 "Bad input": every row of the page's table, tested as written.

The table on ``protocol/README.md`` names each case, the error code the
server answers and whether the connection stays open. Each case here sends
that input and checks exactly that; a row without a scenario (or a scenario
without a row) fails, so page and server cannot drift apart.
"""

from __future__ import annotations

import json
import re
import struct
from pathlib import Path
from typing import Awaitable, Callable

import msgpack
import pytest

from tests.conformance_server.conftest import joined
from tests.conformance_server.test_framing import HELLO
from tests.conformance_server.wire import JSONL, MSGPACK, SpecBot, encode, padded

README = (Path(__file__).resolve().parents[2] / "protocol" / "README.md").read_text()


def frame(body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + body


def nested(depth: int) -> object:
    """An array ``depth`` levels deep (the innermost holds null)."""
    value: object = None
    for _ in range(depth):
        value = [value]
    return value


def deep_msgpack(depth: int, match: str = "m", request_id: int = 1) -> bytes:
    """An action whose ``action`` is ``depth`` arrays deep, built as bytes
    (a msgpack library would refuse to pack it)."""
    head = msgpack.packb({"type": "action", "match": match, "id": request_id})
    return frame(bytes([head[0] + 1]) + head[1:] + msgpack.packb("action")
                 + b"\x91" * depth + b"\xc0")


Scenario = Callable[[int], Awaitable[tuple[SpecBot, str]]]
SCENARIOS: dict[str, Scenario] = {}


def scenario(case: str) -> Callable[[Scenario], Scenario]:
    def register(fn: Scenario) -> Scenario:
        SCENARIOS[case] = fn
        return fn
    return register


async def raw(port: int, data: bytes, encoding: str = MSGPACK) -> SpecBot:
    bot = await SpecBot(encoding).connect(port)
    await bot.send_raw(data)
    return bot


async def after_hello(port: int, data: bytes, encoding: str = MSGPACK) -> SpecBot:
    bot = await joined(port, "rowbot", encoding)
    await bot.send_raw(data)
    return bot


@scenario("text")
async def _text(port):
    bot = await raw(port, b"GET / HTTP/1.1\r\nHost: arena\r\n\r\n", JSONL)  # answered as JSON Lines
    return bot, "msgpack"


@scenario("frame-too-large")
async def _frame_too_large(port):
    return await after_hello(port, struct.pack(">I", 65_537)), "65536"


@scenario("line-too-long")
async def _line_too_long(port):
    return await after_hello(port, b'{"type":"x","pad":"' + b"x" * 70_000, JSONL), "65536"


@scenario("empty-frame")
async def _empty_frame(port):
    return await after_hello(port, b"\x00\x00\x00\x00"), "empty"


@scenario("undecodable")
async def _undecodable(port):
    return await after_hello(port, frame(b"\x82\xa4type")), "msgpack"


@scenario("not-a-map")
async def _not_a_map(port):
    return await after_hello(port, b"[1,2]\n", JSONL), "map"


@scenario("non-string-key")
async def _non_string_key(port):
    return await after_hello(port, frame(msgpack.packb({"type": "bye", 1: 2}))), "key"


@scenario("bad-value")
async def _bad_value(port):
    return await after_hello(port, encode({"type": "action", "match": "m", "id": 1.5,
                                           "action": "enter"}, MSGPACK)), "float"


@scenario("too-deep")
async def _too_deep(port):
    return await after_hello(port, deep_msgpack(40)), "deep"


@scenario("first-not-hello")
async def _first_not_hello(port):
    return await raw(port, encode({"type": "action", "match": "m", "id": 1, "action": "x"},
                                  MSGPACK)), "hello"


@scenario("bad-hello")
async def _bad_hello(port):
    return await raw(port, encode({**HELLO, "max_matches": 0}, JSONL), JSONL), "max_matches"


@scenario("unknown-game")
async def _unknown_game(port):
    return await raw(port, encode({**HELLO, "game": "chess"}, MSGPACK)), "chess"


@scenario("no-type")
async def _no_type(port):
    return await after_hello(port, encode({"kind": "action"}, MSGPACK)), "type"


@scenario("bad-field")
async def _bad_field(port):
    return await after_hello(port, encode({"type": "action", "match": "m", "id": "seven",
                                           "action": "enter"}, JSONL), JSONL), "action.id"


@scenario("unknown-type")
async def _unknown_type(port):
    return await after_hello(port, encode({"type": "dance"}, MSGPACK)), "dance"


@scenario("second-hello")
async def _second_hello(port):
    return await after_hello(port, encode(HELLO, MSGPACK)), "hello"


@scenario("no-seat")
async def _no_seat(port):
    return await after_hello(port, encode({"type": "action", "match": "m9", "id": 1,
                                           "action": "enter"}, MSGPACK)), "m9"


def rules_table() -> dict[str, tuple[str, str]]:
    """case -> (error code, "closed" | "stays open") from the page."""
    section = README.split("### Bad input", 1)[1].split("\n### ", 1)[0]
    rows = re.findall(r"^\| `([a-z-]+)` \|[^|]*\|[^|]*\| `([a-z_]+)`[^|]*\| ([a-z ]+) \|$",
                      section, flags=re.M)
    return {case: (code, outcome.strip()) for case, code, outcome in rows}


def test_every_row_of_the_bad_input_table_has_a_scenario():
    assert set(rules_table()) == set(SCENARIOS)
    assert {outcome for _, outcome in rules_table().values()} <= {"closed", "stays open"}


@pytest.mark.parametrize("case", sorted(SCENARIOS))
async def test_the_server_keeps_the_bad_input_table(make_server, case):
    code, outcome = rules_table()[case]
    server = await make_server()
    bot, says = await SCENARIOS[case](server.port)
    error = await bot.error(timeout=3)
    assert error["code"] == code, error
    assert says in error["message"], error
    if outcome == "closed":
        assert await bot.closed_after(timeout=3) == []
    else:
        await bot.send({"type": "dance"})  # still read and answered
        assert (await bot.error(timeout=3))["code"] == "unknown_type"
        await bot.close()


@pytest.mark.parametrize("encoding", [MSGPACK, JSONL])
async def test_nesting_that_hits_the_recursion_limit_is_malformed_for_a_seated_bot(
        make_server, encoding):
    server = await make_server(house_wait_s=0.0)
    bot = await joined(server.port, "deep", encoding)
    request = await bot.request()
    if encoding == MSGPACK:
        data = deep_msgpack(995, request["match"], request["id"])
    else:
        data = (b'{"type":"action","match":' + json.dumps(request["match"]).encode()
                + b',"id":' + str(request["id"]).encode() + b',"action":'
                + b"[" * 995 + b"]" * 995 + b"}\n")
    await bot.send_raw(data)
    got = await bot.closed_after(timeout=5)
    errors = [m for m in got if m["type"] == "error"]
    assert errors and errors[-1]["code"] == "malformed", got[-2:]
    assert "deep" in errors[-1]["message"]


@pytest.mark.parametrize("first", [b"hello\n", b"GET / HTTP/1.1\r\n\r\n", b"\x16\x03\x01\x02\x00"],
                         ids=["text", "http", "tls"])
async def test_a_first_byte_that_is_neither_a_length_nor_a_brace_is_explained(make_server, first):
    server = await make_server()
    bot = await raw(server.port, first, JSONL)
    got = await bot.closed_after(timeout=3)
    assert len(got) == 1 and got[0]["code"] == "malformed", got
    text = got[0]["message"]
    assert "msgpack" in text and "JSON Lines" in text and "protocol" in text
    assert "bytes announced" not in text


async def test_a_lone_surrogate_in_a_json_string_is_malformed(make_server):
    server = await make_server()
    bot = await joined(server.port, "surrogate", JSONL)
    await bot.send_raw(b'{"type":"\\ud800"}\n')
    got = await bot.closed_after(timeout=3)
    assert got and got[-1]["code"] == "malformed", got


async def test_a_hello_at_the_frame_limit_with_nesting_within_the_limit_is_read(make_server):
    server = await make_server()
    bot = await SpecBot(JSONL).connect(server.port)
    await bot.send(padded({**HELLO, "extra": nested(30)}, 60_000, JSONL))
    assert (await bot.recv())["type"] == "welcome"
    await bot.close()


async def test_an_integer_outside_msgpacks_range_is_malformed(make_server):
    """JSON has no integer bound; the reply (which names the id) must still encode."""
    server = await make_server()
    bot = await joined(server.port, "bigint", JSONL)
    await bot.send_raw(b'{"type":"action","match":"m","id":' + b"9" * 30 + b',"action":"x"}\n')
    got = await bot.closed_after(timeout=3)
    assert got and got[-1]["code"] == "malformed" and "range" in got[-1]["message"], got
