"""A slow, broken or hostile bot affects only its own seat or connection."""

from __future__ import annotations

import asyncio
import random

from arena.auth import hash_token
from arena.storage.base import MatchStatus
from protocol.codec import Encoding
from protocol.sdk.client import BotClient
from tests.server.rawbot import RawBot


def first_legal(phase, legal, state):
    return legal[0]


async def seated(server, name="raw", token="t", encoding=Encoding.MSGPACK) -> RawBot:
    bot = await RawBot(encoding).connect(server.port)
    welcome = await bot.hello(token, name)
    assert welcome["type"] == "welcome"
    return bot


async def test_a_silent_bot_is_defaulted_at_its_deadline(make_server):
    server = await make_server(house_wait_s=0.0, decision_ms=300, bank_ms=0)
    bot = await seated(server)
    start = await bot.until(lambda m: m["type"] == "match_start")
    request = await bot.request()
    assert request["deadline_ms"] == 300
    # When the default comes is the session's rule, tested on a fake clock
    # (test_session_rules.py); here: that the server applies it at all.
    timeout = await bot.event("timeout")
    assert timeout == {"kind": "timeout", "seat": start["seat"], "phase": request["phase"]}
    # The default was applied for our seat (rules §11), e.g. fold when deciding.
    if request["phase"] == "decide":
        decision = await bot.until(lambda m: m["type"] == "event"
                                   and m["event"]["kind"] == "decision"
                                   and m["event"]["seat"] == start["seat"])
        assert decision["event"]["choice"] == "fold"
    # An answer after the deadline is late.
    await bot.answer(request, request["legal"][0])
    late = await bot.until(lambda m: m["type"] == "error")
    assert late["code"] == "late" and late["id"] == request["id"]
    await bot.close()


async def test_three_timeouts_in_a_row_put_the_seat_on_autopilot(make_server):
    server = await make_server(house_wait_s=0.0, decision_ms=100, bank_ms=0)
    bot = await seated(server)
    start = await bot.until(lambda m: m["type"] == "match_start")
    # One answer, then silence: a match no seat of which its own bot played
    # would not count at all.
    first = await bot.request()
    await bot.answer(first, first["legal"][0])
    autopilot = await bot.event("autopilot", timeout=20)
    assert autopilot == {"kind": "autopilot", "seat": start["seat"], "reason": "timeouts"}
    timeouts = [m for m in bot.seen if m["type"] == "event" and m["event"]["kind"] == "timeout"]
    assert len(timeouts) == 3
    end = await bot.until(lambda m: m["type"] == "match_end", timeout=30)
    assert not any(m["type"] == "request" for m in bot.seen[bot.seen.index(end) - 1:])
    await server.writer.flush()
    record = server.store.get_match(end["match"])
    assert record.status is MatchStatus.FINISHED
    assert record.faults[start["seat"]].timeouts == 3
    assert record.faults[start["seat"]].autopilot


async def test_the_bank_extends_the_deadline_and_is_spent(make_server):
    server = await make_server(house_wait_s=0.0, decision_ms=100, bank_ms=200)
    bot = await seated(server)
    first = await bot.request()
    assert first["deadline_ms"] == 300
    await asyncio.sleep(0.2)  # 100 ms over decision_ms: taken from the bank
    await bot.answer(first, first["legal"][0])
    second = await bot.request()
    # The bank kept is 200 ms less what the answer took past decision_ms
    # (by the server's clock, which also holds the round trip): at most
    # 100 ms left. The exact sums are the session's rules, on a fake clock.
    assert 100 <= second["deadline_ms"] <= 200
    await bot.close()


async def test_an_illegal_answer_gets_an_error_and_may_be_retried(make_server):
    server = await make_server(house_wait_s=0.0)
    bot = await seated(server)
    start = await bot.until(lambda m: m["type"] == "match_start")
    request = await bot.asked("decide")
    await bot.answer(request, "maybe")
    error = await bot.until(lambda m: m["type"] == "error")
    assert error["code"] == "illegal_action" and error["id"] == request["id"]
    assert "maybe" in error["message"]
    await bot.answer(request, "enter")
    decision = await bot.until(lambda m: m["type"] == "event" and m["event"]["kind"] == "decision"
                               and m["event"]["seat"] == start["seat"])
    assert decision["event"]["choice"] == "enter"
    await bot.send({"type": "action", "match": request["match"], "id": 99999, "action": "enter"})
    unknown = await bot.until(lambda m: m["type"] == "error")
    assert unknown["code"] == "unknown_request"
    await bot.answer(request, "enter")
    late = await bot.until(lambda m: m["type"] == "error")
    assert late["code"] == "late"
    end = await bot.play_to_end()
    await server.writer.flush()
    assert server.store.get_match(end["match"]).faults[start["seat"]].illegal == 1


async def test_a_bot_that_disconnects_is_autopiloted_and_gets_its_seat_back(make_server):
    server = await make_server(house_wait_s=0.3)
    steady = BotClient("127.0.0.1", server.port, "steady-token", "steady", first_legal,
                       max_matches=1, reconnect=False, threaded=False)
    steady_task = asyncio.create_task(steady.run())
    flaky = await seated(server, "flaky", "flaky-token")
    start = await flaky.until(lambda m: m["type"] == "match_start")
    await flaky.request()
    await flaky.close()

    back = await seated(server, "flaky", "flaky-token")
    again = await back.until(lambda m: m["type"] == "match_start")
    assert (again["match"], again["seat"]) == (start["match"], start["seat"])
    request = await back.request()
    for key in ("round", "hand", "dealer", "seat", "trump", "face_up", "cards", "scores", "stars",
                "status", "stock", "face_up_taken", "trick", "leader", "tricks", "played"):
        assert key in request["state"], key
    end = await back.play_to_end()
    async with asyncio.timeout(30):
        await steady_task
    await server.writer.flush()
    record = server.store.get_match(end["match"])
    assert record.status is MatchStatus.FINISHED
    assert record.faults[start["seat"]].disconnects == 1
    log = [e.data for e in server.store.get_events(record.id)]
    assert {"kind": "autopilot", "seat": start["seat"], "reason": "disconnected"} in log
    await back.close()


async def test_garbage_closes_only_that_connection(make_server):
    server = await make_server(house_wait_s=0.0)
    player = BotClient("127.0.0.1", server.port, "p", "player", first_legal, max_matches=1,
                       reconnect=False, threaded=False)
    task = asyncio.create_task(player.run())
    vandal = await RawBot().connect(server.port)
    await vandal.send_raw(b"\x00\x00\x00\x05\xc1\xc1\xc1\xc1\xc1")
    error = await vandal.recv()
    assert error["type"] == "error" and error["code"] == "malformed"
    assert await vandal.recv() is None  # closed
    async with asyncio.timeout(30):
        await task
    assert player.matches_played == 1


async def test_an_oversized_frame_is_refused_before_it_is_read(make_server):
    server = await make_server()
    bot = await RawBot().connect(server.port)
    await bot.send_raw((10_000_000).to_bytes(4, "big"))
    error = await bot.recv()
    assert error["code"] == "frame_too_large"
    assert await bot.recv() is None


async def test_an_overlong_json_line_is_refused(make_server):
    server = await make_server()
    bot = await RawBot(Encoding.JSONL).connect(server.port)
    await bot.send_raw(b'{"type":"hello","token":"' + b"x" * 70_000)
    error = await bot.recv()
    assert error["code"] == "frame_too_large"
    assert await bot.recv() is None


async def test_hello_must_come_first_and_in_time(make_server):
    server = await make_server(hello_timeout_s=0.2)
    silent = await RawBot().connect(server.port)
    # (When it comes is the link's rule, tested on a fake clock in test_link.py.)
    error = await silent.recv()
    assert error["code"] == "hello_timeout"
    rude = await RawBot().connect(server.port)
    await rude.send({"type": "action", "match": "x", "id": 1, "action": "enter"})
    assert (await rude.recv())["code"] == "expected_hello"
    assert await rude.recv() is None
    future = await RawBot().connect(server.port)
    await future.send({"type": "hello", "protocol": 2, "token": "t"})
    assert (await future.recv())["code"] == "unsupported_protocol"


async def test_unknown_types_are_answered_and_ignored(make_server):
    server = await make_server()
    bot = await seated(server)
    await bot.send({"type": "dance", "style": "biyelgee"})
    error = await bot.recv()
    assert error["code"] == "unknown_type"
    await bot.send({"type": "bye"})
    assert await bot.recv() is None  # bye: the server closes; nothing else came
    await bot.close()


async def test_registered_mode_refuses_a_bad_token(make_server):
    server = await make_server(open=False)
    server.store.add_bot("alice", hash_token("good-token"))
    bad = await RawBot().connect(server.port)
    error = await bad.hello("wrong-token", "alice")
    assert error["code"] == "auth_failed"
    assert await bad.recv() is None
    good = await RawBot().connect(server.port)
    welcome = await good.hello("good-token", "whatever-name")
    assert welcome["type"] == "welcome" and welcome["bot"] == "alice"
    await good.close()


async def test_a_flood_is_rate_limited_then_closed(make_server):
    server = await make_server(rate_limit_per_s=10.0, rate_limit_burst=5, rate_limit_strikes=3)
    bot = await seated(server)
    for _ in range(20):
        await bot.send({"type": "dance"})
    codes = []
    while (message := await bot.recv()) is not None:
        codes.append(message["code"])
    assert "rate_limited" in codes
    assert codes[-1] == "rate_limited"


async def test_a_slow_table_does_not_stall_another(make_server):
    # The sleeper's deadline is far beyond the bounded wait for the fast
    # match: that match can only finish while the sleeper's table waits.
    server = await make_server(house_wait_s=0.0, decision_ms=120_000, bank_ms=0)
    sleeper = await seated(server, "sleeper", "s")  # never answers
    await sleeper.request()
    fast = BotClient("127.0.0.1", server.port, "f", "fast", first_legal, max_matches=1,
                     reconnect=False, threaded=False)
    async with asyncio.timeout(60):
        await fast.run()
    assert fast.matches_played == 1
    await sleeper.close()
