"""Protocol §2: hello, welcome, and the handshake's refusals."""

from __future__ import annotations

import asyncio
import time

import pytest

from arena.auth import hash_token
from tests.conformance_server.conftest import joined
from tests.conformance_server.test_framing import HELLO, refused
from tests.conformance_server.wire import ENCODINGS, JSONL, MSGPACK, SpecBot, encode
from tests.timing import MS


async def test_a_hello_not_complete_within_5_s_gets_hello_timeout(make_server):
    """Default settings: a half-sent hello (either encoding) and silence
    are both cut off at 5 s, not before."""
    server = await make_server()
    t0 = time.monotonic()
    half_msgpack = await SpecBot(MSGPACK).connect(server.port)
    await half_msgpack.send_raw(encode(HELLO, MSGPACK)[:10])
    half_jsonl = await SpecBot(JSONL).connect(server.port)
    await half_jsonl.send_raw(encode(HELLO, JSONL)[:10])
    silent = await SpecBot(MSGPACK).connect(server.port)

    async def cut_off(bot: SpecBot) -> float:
        await refused(bot, "hello_timeout")
        return time.monotonic() - t0

    elapsed = await asyncio.gather(*(cut_off(b) for b in (half_msgpack, half_jsonl, silent)))
    assert all(4.8 <= e <= 5.0 + 3000 * MS for e in elapsed), elapsed


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("first", [{"type": "action", "match": "m", "id": 1, "action": "enter"},
                                   {"type": "bye"}, {"type": "dance"}, {"protocol": 1}],
                         ids=["action", "bye", "unknown", "no-type"])
async def test_any_other_first_message_gets_expected_hello(make_server, encoding, first):
    server = await make_server()
    bot = await SpecBot(encoding).connect(server.port)
    await bot.send(first)
    await refused(bot, "expected_hello")


@pytest.mark.parametrize("encoding", ENCODINGS)
async def test_welcome_has_protocol_bot_and_server(make_server, encoding):
    server = await make_server()
    bot = await SpecBot(encoding).connect(server.port)
    welcome = await bot.hello("tok", "Named_bot-1.0")
    assert welcome["type"] == "welcome"
    assert welcome["protocol"] == 1
    assert welcome["bot"] == "Named_bot-1.0"  # open mode: the name comes from hello
    assert isinstance(welcome["server"], str) and welcome["server"]
    await bot.close()


async def test_name_is_optional_in_open_mode(make_server):
    server = await make_server()
    bot = await SpecBot().connect(server.port)
    welcome = await bot.hello("tok", name=None)
    assert welcome["type"] == "welcome" and isinstance(welcome["bot"], str) and welcome["bot"]
    await bot.close()


@pytest.mark.parametrize("encoding", ENCODINGS)
async def test_registered_mode_welcomes_by_registered_name_and_refuses_bad_tokens(
        make_server, encoding):
    server = await make_server(open=False)
    server.store.add_bot("alice", hash_token("alice-secret"))
    good = await SpecBot(encoding).connect(server.port)
    welcome = await good.hello("alice-secret", "not-alice")
    assert welcome["type"] == "welcome" and welcome["bot"] == "alice"
    bad = await SpecBot(encoding).connect(server.port)
    await bad.send({"type": "hello", "protocol": 1, "token": "guess", "name": "alice"})
    await refused(bad, "auth_failed")
    await good.close()


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("version", [0, 2, 99])
async def test_another_protocol_version_is_unsupported(make_server, encoding, version):
    server = await make_server()
    bot = await SpecBot(encoding).connect(server.port)
    await bot.send({**HELLO, "protocol": version})
    await refused(bot, "unsupported_protocol")


async def test_one_bot_may_hold_several_connections_each_at_one_table(make_server):
    server = await make_server(house_wait_s=0.0)
    first = await joined(server.port, "twin", MSGPACK, token="same-token")
    second = await joined(server.port, "twin", JSONL, token="same-token")
    starts = await asyncio.gather(*(b.until(lambda m: m["type"] == "match_start")
                                    for b in (first, second)))
    if starts[0]["match"] == starts[1]["match"]:
        assert starts[0]["seat"] != starts[1]["seat"]
    ends = await asyncio.gather(first.play_to_end(), second.play_to_end())
    for bot, start, end in zip((first, second), starts, ends):
        assert end["match"] == start["match"]
        during = bot.seen[bot.seen.index(start): bot.seen.index(end)]
        # Seated at one table at a time: every match message is about that match.
        assert {m.get("match") for m in during} == {start["match"]}
        assert sum(m["type"] == "match_start" for m in during) == 1
        await bot.close()
