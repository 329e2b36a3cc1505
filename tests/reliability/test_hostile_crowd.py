"""Hostile scenarios on the bot port; after each, the same three checks
(``soundness.assert_sound``): a new bot is served at once, every finished
match is stored exactly once, and the served standings replay from the
stored events."""

from __future__ import annotations

import asyncio
import random
import struct

from arena.auth import hash_token
from tests.conformance_server.wire import JSONL, MSGPACK, SpecBot, encode
from tests.reliability.soundness import assert_sound

HELLO = {"type": "hello", "protocol": 1}


async def connect_many(port: int, n: int) -> list[SpecBot]:
    return list(await asyncio.gather(*(SpecBot().connect(port) for _ in range(n))))


async def drain_all(bots: list[SpecBot], timeout: float = 5.0) -> list[list[dict]]:
    """What each bot read until the server closed it."""
    return list(await asyncio.gather(*(bot.closed_after(timeout) for bot in bots)))


def last_codes(transcripts: list[list[dict]]) -> list[str | None]:
    return [t[-1].get("code") if t else None for t in transcripts]


async def timed_close(bot: SpecBot, timeout: float = 5.0) -> tuple[float, list[dict]]:
    t0 = asyncio.get_running_loop().time()
    got = await bot.closed_after(timeout)
    return asyncio.get_running_loop().time() - t0, got


async def test_an_over_cap_crowd_is_refused_at_once_and_bots_are_still_served(arena):
    server = await arena()
    crowd = await connect_many(server.port, 200)  # silent, from one address
    closes = asyncio.gather(*(timed_close(bot) for bot in crowd))
    await assert_sound(server)  # while the crowd still holds its 40 sockets
    results = await closes
    refused = [t for t, got in results if got and got[-1]["code"] == "rate_limited"]
    timed_out = [t for t, got in results if got and got[-1]["code"] == "hello_timeout"]
    assert len(refused) == 160 and len(timed_out) == 40
    assert max(refused) < 1.0, "an over-cap connection waited for its refusal"


async def test_trickling_and_silent_connections_are_cut_and_bots_are_still_served(arena):
    server = await arena()
    tricklers = await connect_many(server.port, 30)
    data = encode({**HELLO, "token": "t", "name": "slow", "pad": "x" * 200}, MSGPACK)

    async def trickle(bot: SpecBot) -> None:
        try:
            for byte in data:
                await bot.send_raw(bytes([byte]))
                await asyncio.sleep(0.05)
        except (ConnectionError, OSError):
            pass

    senders = [asyncio.get_running_loop().create_task(trickle(bot)) for bot in tricklers]
    closes = asyncio.ensure_future(drain_all(tricklers))  # read as a bot would, meanwhile
    await assert_sound(server)
    assert set(last_codes(await closes)) == {"hello_timeout"}
    for task in senders:
        task.cancel()


async def test_bots_that_say_hello_and_never_answer_do_not_stall_the_arena(arena):
    server = await arena(decision_ms=100)
    sleepers = []
    for i in range(4):
        bot = await SpecBot().connect(server.port)
        assert (await bot.hello(f"sleeper-token-{i}", f"sleeper{i}"))["type"] == "welcome"
        sleepers.append(bot)
    await asyncio.sleep(1.5)  # seated, timed out, autopiloted
    await assert_sound(server)
    for bot in sleepers:
        await bot.close()


async def test_deeply_nested_frames_are_refused_and_bots_are_still_served(arena):
    server = await arena()
    bots = []
    for i in range(20):
        encoding = (MSGPACK, JSONL)[i % 2]
        bot = await SpecBot(encoding).connect(server.port)
        if encoding == MSGPACK:
            body = b"\x83\xa4type\xa5hello\xa8protocol\x01\xa5token" + b"\x91" * 990 + b"\xc0"
            await bot.send_raw(struct.pack(">I", len(body)) + body)
        else:
            await bot.send_raw(b'{"type":"hello","protocol":1,"token":' + b"[" * 990
                               + b"]" * 990 + b"}\n")
        bots.append(bot)
    assert set(last_codes(await drain_all(bots))) == {"malformed"}
    await assert_sound(server)


async def test_garbage_bytes_are_refused_and_bots_are_still_served(arena):
    server = await arena()
    rng = random.Random(9)
    bots = []
    for _ in range(40):
        bot = await SpecBot(JSONL).connect(server.port)
        await bot.send_raw(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 400))))
        bots.append(bot)
    transcripts = await drain_all(bots, timeout=5)
    # Every connection is told why it is closed (a garbage start may also
    # pass as a msgpack length and wait for its hello: then hello_timeout).
    assert all(t and t[-1]["type"] == "error" for t in transcripts), transcripts
    await assert_sound(server)


async def test_token_guessing_is_throttled_and_registered_bots_are_still_served(arena):
    server = await arena(open=False)
    server.store.add_bot("owner", hash_token("the-real-token"))
    codes = []
    for i in range(30):
        bot = await SpecBot().connect(server.port)
        await bot.send({**HELLO, "token": f"guess-{i}"})
        codes.append(last_codes([await bot.closed_after()])[0])
    assert codes[:5] == ["auth_failed"] * 5 and set(codes[5:]) == {"rate_limited"}, codes
    await assert_sound(server)  # from another address: not throttled


async def test_flooding_bots_are_closed_with_a_reason_and_bots_are_still_served(arena):
    server = await arena()
    flooders = []
    for i in range(6):
        encoding = (MSGPACK, JSONL)[i % 2]
        bot = await SpecBot(encoding).connect(server.port)
        assert (await bot.hello(f"flood-token-{i}", f"flood{i}"))["type"] == "welcome"
        junk = [{"type": "dance"}, {"type": "action", "match": "nope", "id": 1, "action": "x"}]
        await bot.send_raw(b"".join(encode(junk[k % 2], encoding) for k in range(400)))
        flooders.append(bot)
    transcripts = await drain_all(flooders)
    for transcript in transcripts:
        assert transcript[-1]["code"] == "rate_limited" and "closed" in transcript[-1]["message"]
    await assert_sound(server)
