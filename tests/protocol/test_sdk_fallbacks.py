"""The SDK may answer for a strategy that failed, but never silently."""

from __future__ import annotations

import asyncio

import structlog

from protocol import Error, ErrorCode, MatchEnd
from protocol.sdk import FallbackReason
from protocol.testing import ScriptedServer

from tests.protocol.test_sdk_client import client_for, finish, match_start, request


async def answer_once(strategy, **request_options):
    async with ScriptedServer() as server:
        client = client_for(server, strategy)
        task = asyncio.create_task(client.run())
        conn = await server.accept()
        await conn.handshake()
        await conn.send(match_start())
        await conn.send(request(**request_options))
        action = await conn.expect("action")
        await conn.send({"type": "bye"})
        await finish(task)
    return client, action


async def test_an_illegal_answer_is_replaced_and_counted_and_logged():
    with structlog.testing.capture_logs() as logs:
        client, action = await answer_once(lambda phase, legal, state: "ZZ")
    assert action["action"] == "7H"  # the legal fallback went out
    assert client.fallbacks == 1
    assert client.fallback_counts[FallbackReason.ILLEGAL] == 1
    warnings = [e for e in logs if e["log_level"] == "warning" and e.get("reason") == "illegal"]
    assert len(warnings) == 1 and warnings[0]["answered"] == "'ZZ'"


async def test_the_fallback_says_so_on_the_wire():
    _, action = await answer_once(lambda phase, legal, state: "ZZ")
    assert action["sdk_fallback"] == {"reason": "illegal", "answered": "'ZZ'"}


async def test_a_legal_answer_carries_no_fallback_mark():
    client, action = await answer_once(lambda phase, legal, state: legal[-1])
    assert action == {"type": "action", "match": "m1", "id": 1, "action": "AS"}
    assert client.fallbacks == 0


async def test_a_strategy_that_raises_counts_as_a_fallback_too():
    client, action = await answer_once(lambda phase, legal, state: 1 / 0)
    assert action["sdk_fallback"]["reason"] == "raised"
    assert client.fallback_counts[FallbackReason.RAISED] == 1


async def test_each_fallback_is_counted_per_match():
    async with ScriptedServer() as server:
        client = client_for(server, lambda phase, legal, state: "ZZ")
        task = asyncio.create_task(client.run())
        conn = await server.accept()
        await conn.handshake()
        await conn.send(match_start())
        for request_id in (1, 2, 3):
            await conn.send(request(id=request_id))
            await conn.expect("action")
        await conn.send(MatchEnd("m1", {"stars": [0, 1, 0, 0, 0]}, []))
        await conn.send({"type": "bye"})
        await finish(task)
    assert client.fallbacks == 3
    assert client.finished[0].fallbacks == 3


async def test_an_error_naming_its_match_is_applied_to_that_match():
    """Request ids repeat across matches: the error's ``match`` decides."""
    async with ScriptedServer() as server:
        client = client_for(server, lambda phase, legal, state: legal[0])
        task = asyncio.create_task(client.run())
        conn = await server.accept()
        await conn.handshake()
        await conn.send(match_start("a"))
        await conn.send(match_start("b"))
        await conn.send(request(match="a", id=5, legal=["7H", "AS"], deadline_ms=2000))
        assert (await conn.expect("action"))["match"] == "a"
        await conn.send(request(match="b", id=5, legal=["8D", "9D"], deadline_ms=3000))
        assert (await conn.expect("action"))["match"] == "b"
        # b's request expires later (what a client guessing by id prefers);
        # the error names a.
        wire = Error(ErrorCode.ILLEGAL_ACTION, "no", id=5).to_wire()
        wire["match"] = "a"
        await conn.send(wire)
        retry = await conn.expect("action")
        assert (retry["match"], retry["id"], retry["action"]) == ("a", 5, "AS")
        await conn.send({"type": "bye"})
        await finish(task)


async def test_max_matches_is_announced_in_the_hello():
    async with ScriptedServer() as server:
        client = client_for(server, max_matches=2)
        task = asyncio.create_task(client.run())
        conn = await server.accept()
        hello = await conn.handshake()
        assert hello["max_matches"] == 2
        await conn.send({"type": "bye"})
        await finish(task)
