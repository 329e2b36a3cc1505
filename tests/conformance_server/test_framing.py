"""Protocol §1: framing, limits, and what a broken frame does."""

from __future__ import annotations

import asyncio
import json
import struct

import msgpack
import pytest

from tests.conformance_server.conftest import directed, joined, play_on
from tests.conformance_server.wire import (ENCODINGS, JSONL, MAX_BOT_FRAME, MSGPACK, SpecBot,
                                           body_size, encode, padded)

HELLO = {"type": "hello", "protocol": 1, "token": "tok", "name": "framer"}


def frame(body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + body


async def refused(bot: SpecBot, code: str) -> None:
    """The server answers ``error`` with ``code`` and then closes."""
    got = await bot.closed_after()
    assert got and got[-1]["type"] == "error" and got[-1]["code"] == code, got
    assert isinstance(got[-1]["message"], str) and got[-1]["message"]


@pytest.mark.parametrize("encoding", ENCODINGS)
async def test_a_hello_of_exactly_65536_bytes_is_read(make_server, encoding):
    server = await make_server()
    bot = await SpecBot(encoding).connect(server.port)
    big = padded(HELLO, MAX_BOT_FRAME, encoding)
    assert body_size(big, encoding) == MAX_BOT_FRAME
    await bot.send(big)
    welcome = await bot.recv()
    assert welcome["type"] == "welcome" and welcome["bot"] == "framer"
    await bot.close()


@pytest.mark.parametrize("encoding", ENCODINGS)
async def test_after_hello_a_65536_byte_message_is_read_and_65537_refused(make_server, encoding):
    server = await make_server()
    bot = await joined(server.port, "framer", encoding)
    await bot.send(padded({"type": "no-such-type"}, MAX_BOT_FRAME, encoding))
    error = await bot.error()
    assert error["code"] == "unknown_type"  # read whole, and the connection stays open
    await bot.send(padded({"type": "no-such-type"}, MAX_BOT_FRAME + 1, encoding))
    await refused(bot, "frame_too_large")


async def test_an_announced_length_over_the_limit_is_refused_before_the_body(make_server):
    server = await make_server()
    bot = await SpecBot(MSGPACK).connect(server.port)
    await bot.send_raw(struct.pack(">I", MAX_BOT_FRAME + 1))  # no body follows
    await refused(bot, "frame_too_large")


async def test_an_overlong_json_line_is_refused_before_its_newline(make_server):
    server = await make_server()
    bot = await SpecBot(JSONL).connect(server.port)
    await bot.send_raw(b'{"type":"hello","pad":"' + b"x" * (MAX_BOT_FRAME + 10))
    await refused(bot, "frame_too_large")


@pytest.mark.parametrize("after_hello", [False, True])
async def test_an_empty_frame_is_malformed(make_server, after_hello):
    server = await make_server()
    bot = await (joined(server.port, "framer") if after_hello
                 else SpecBot(MSGPACK).connect(server.port))
    await bot.send_raw(struct.pack(">I", 0))
    await refused(bot, "malformed")


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("value", [[1, 2], "hello", 7, None], ids=["array", "string", "int", "null"])
async def test_a_message_that_is_not_a_map_is_malformed(make_server, encoding, value):
    server = await make_server()
    bot = await joined(server.port, "framer", encoding)
    await bot.send(value)
    await refused(bot, "malformed")


async def test_a_map_with_non_string_keys_is_malformed(make_server):
    server = await make_server()
    bot = await joined(server.port, "framer")
    await bot.send_raw(frame(msgpack.packb({"type": "action", 1: "x"})))
    await refused(bot, "malformed")


async def test_a_nested_map_with_non_string_keys_is_malformed(make_server):
    server = await make_server()
    bot = await joined(server.port, "framer")
    await bot.send_raw(frame(msgpack.packb({"type": "no-such-type", "x": {2: "y"}})))
    await refused(bot, "malformed")


@pytest.mark.parametrize("body", [b"\xc1", b"\x82\xa4type", b"\x81\xa4type\xa3bye\xc0"],
                         ids=["never-used-byte", "truncated-map", "two-values"])
async def test_msgpack_bytes_that_do_not_decode_to_one_map_are_malformed(make_server, body):
    server = await make_server()
    bot = await joined(server.port, "framer")
    await bot.send_raw(frame(body))
    await refused(bot, "malformed")


@pytest.mark.parametrize("line", [b'{"type":"\xff\xfe"}', b"{oops}", b"", b'{"type":"bye"} {}'],
                         ids=["invalid-utf8", "not-json", "empty-line", "two-values"])
async def test_json_lines_that_do_not_decode_to_one_object_are_malformed(make_server, line):
    server = await make_server()
    bot = await joined(server.port, "framer", JSONL)
    await bot.send_raw(line + b"\n")
    await refused(bot, "malformed")


async def test_invalid_utf8_in_the_first_json_line_is_malformed(make_server):
    server = await make_server()
    bot = await SpecBot(JSONL).connect(server.port)
    await bot.send_raw(b'{"type":"hello","protocol":1,"token":"\xc3\x28"}\n')
    await refused(bot, "malformed")


@pytest.mark.parametrize("encoding", ENCODINGS)
async def test_the_first_byte_chooses_the_encoding_for_both_directions(make_server, encoding):
    server = await make_server()
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    writer.write(encode(HELLO, encoding))
    await writer.drain()
    async with asyncio.timeout(5):
        if encoding == JSONL:
            line = await reader.readuntil(b"\n")
            assert json.loads(line.decode("utf-8"))["type"] == "welcome"
        else:
            (size,) = struct.unpack(">I", await reader.readexactly(4))
            assert msgpack.unpackb(await reader.readexactly(size))["type"] == "welcome"
    writer.close()


@pytest.mark.parametrize("encoding", ENCODINGS)
async def test_a_message_split_into_single_bytes_is_reassembled(make_server, encoding):
    server = await make_server()
    bot = await SpecBot(encoding).connect(server.port)
    for byte in encode(HELLO, encoding):
        await bot.send_raw(bytes([byte]))
    assert (await bot.recv())["type"] == "welcome"
    await bot.close()


@pytest.mark.parametrize("encoding", ENCODINGS)
async def test_several_messages_in_one_write_are_all_read(make_server, encoding):
    server = await make_server()
    bot = await SpecBot(encoding).connect(server.port)
    await bot.send_raw(encode(HELLO, encoding) + encode({"type": "dance"}, encoding)
                       + encode({"type": "tango"}, encoding))
    got = [await bot.recv() for _ in range(3)]
    assert [m["type"] for m in got] == ["welcome", "error", "error"]
    assert [m["code"] for m in got[1:]] == ["unknown_type", "unknown_type"]
    await bot.close()


@pytest.mark.parametrize("encoding", ENCODINGS)
async def test_an_unknown_type_gets_unknown_type_and_the_bot_plays_on(make_server, encoding):
    server = await make_server(house_wait_s=0.0)
    bot = await joined(server.port, "curious", encoding)
    await bot.send({"type": "dance", "style": "biyelgee"})
    error = await bot.error()
    assert error["code"] == "unknown_type"
    request = await bot.request()
    await bot.send({"type": "dance"})  # while a request is open: it stays open
    assert (await bot.error())["code"] == "unknown_type"
    await bot.answer(request, request["legal"][0])
    end = await bot.play_to_end()
    assert end["type"] == "match_end"
    await bot.close()


@pytest.mark.parametrize("encoding", ENCODINGS)
async def test_unknown_fields_are_ignored(make_server, encoding):
    server = await make_server(house_wait_s=0.0)
    bot = await SpecBot(encoding).connect(server.port)
    welcome = await bot.hello("tok", "extra", colour="blue", nested={"a": [1, None]})
    assert welcome["type"] == "welcome"
    start = await bot.until(lambda m: m["type"] == "match_start")
    request = await bot.asked("decide")
    await bot.answer(request, "enter", note="thinking hard", version=3)
    decision = await bot.event("decision", seat=start["seat"])
    assert decision["choice"] == "enter"
    assert not any(m["type"] == "error" for m in bot.seen)
    await bot.close()


@pytest.mark.parametrize("encoding", ENCODINGS)
async def test_a_broken_frame_closes_only_that_connection(make_server, encoding):
    """Nothing else is affected: the other seat plays on, the broken seat is
    taken over by the house bot."""
    server = await make_server(matchmaking=False)
    async with directed(server, ["vandal", "steady", None, None, None], seed="vandal"):
        vandal = await joined(server.port, "vandal", encoding)
        steady = await joined(server.port, "steady", MSGPACK)
        await vandal.until(lambda m: m["type"] == "match_start")
        await vandal.send_raw(b"\xff\xff\n" if encoding == JSONL else frame(b"\xc1"))
        await refused(vandal, "malformed")
        autopilot = await steady.event("autopilot", seat=0)
        assert set(autopilot) == {"kind", "seat", "reason"} and isinstance(autopilot["reason"], str)
        end = await play_on(steady)
        assert sum(end["result"]["stars"]) == 5
        await steady.close()
