"""The bot SDK against a scripted in-process server."""

from __future__ import annotations

import asyncio
import threading

import pytest

from protocol import Encoding, Error, ErrorCode, Event, Limits, MatchEnd, MatchStart, Request, commitment
from protocol.sdk import BotClient, ConnectionLostError, HandshakeError, ServerUnreachableError
from protocol.sdk.strategy import FALLBACK_FIELD
from protocol.testing import ScriptedServer

STATE = {"round": 0, "hand": 0, "seat": 1, "cards": ["7H", "AS"]}


def match_start(match: str = "m1", seat: int = 1) -> MatchStart:
    return MatchStart(match, "muushig", seat, ("a", "b", "c", "d", "e"), {"max_hands": 200}, Limits(2000, 0))


def request(match: str = "m1", id: int = 1, phase: str = "play", legal=None, deadline_ms: int = 2000) -> Request:
    return Request(match, id, phase, deadline_ms, legal if legal is not None else ["7H", "AS"], STATE)


def first_legal(phase, legal, state):
    return legal[0]


def client_for(server: ScriptedServer, strategy=first_legal, **options) -> BotClient:
    options.setdefault("backoff_initial_s", 0.01)
    return BotClient("127.0.0.1", server.port, "tok", "bot-a", strategy, **options)


async def finish(task: asyncio.Task) -> None:
    await asyncio.wait_for(task, 5)


@pytest.mark.parametrize("encoding", list(Encoding))
async def test_handshake_then_a_request_is_answered(encoding):
    async with ScriptedServer() as server:
        client = client_for(server, encoding=encoding)
        task = asyncio.create_task(client.run())
        conn = await server.accept()
        hello = await conn.handshake(bot="alice")
        assert hello == {"type": "hello", "protocol": 1, "token": "tok", "name": "bot-a"}
        assert conn.encoding is encoding
        await conn.send(match_start())
        await conn.send(request(legal=["AS", "7H"]))
        assert await conn.expect("action") == {"type": "action", "match": "m1", "id": 1, "action": "AS"}
        assert client.welcome.bot == "alice"
        assert client.matches["m1"].seat == 1
        assert client.matches["m1"].state == STATE
        await conn.send({"type": "bye"})
        await finish(task)


async def test_an_async_strategy_is_awaited():
    async def think(phase, legal, state):
        await asyncio.sleep(0)
        return legal[-1]

    async with ScriptedServer() as server:
        task = asyncio.create_task(client_for(server, think).run())
        conn = await server.accept()
        await conn.handshake()
        await conn.send(request(phase="take", legal=[None, "7H", "AS"]))
        assert (await conn.expect("action"))["action"] == "AS"
        await conn.send({"type": "bye"})
        await finish(task)


async def test_two_matches_are_multiplexed_and_answered_concurrently():
    second_seen = asyncio.Event()

    async def think(phase, legal, state):
        if state["match"] == "A":
            await second_seen.wait()  # A can only answer once B's request arrived
        else:
            second_seen.set()
        return legal[-1]

    async with ScriptedServer() as server:
        client = client_for(server, think)
        task = asyncio.create_task(client.run())
        conn = await server.accept()
        await conn.handshake()
        await conn.send(match_start("A", seat=0))
        await conn.send(match_start("B", seat=3))
        await conn.send(Request("A", 5, "play", 2000, ["7H", "8H"], {"match": "A"}))
        await conn.send(Request("B", 5, "play", 2000, ["9S", "TS"], {"match": "B"}))
        answers = [await conn.expect("action"), await conn.expect("action")]
        assert sorted((a["match"], a["id"], a["action"]) for a in answers) == [("A", 5, "8H"), ("B", 5, "TS")]
        assert answers[0]["match"] == "B"  # B answered first: A was waiting for it
        assert (client.matches["A"].seat, client.matches["B"].seat) == (0, 3)
        await conn.send({"type": "bye"})
        await finish(task)


async def test_illegal_action_error_gets_a_legal_retry():
    async with ScriptedServer() as server:
        task = asyncio.create_task(client_for(server, lambda p, legal, s: "enter").run())
        conn = await server.accept()
        await conn.handshake()
        await conn.send(request(phase="decide", legal=["enter", "fold"]))
        assert (await conn.expect("action"))["action"] == "enter"
        await conn.send(Error(ErrorCode.ILLEGAL_ACTION, "no", id=1))
        retry = await conn.expect("action")
        assert (retry["id"], retry["action"]) == (1, "fold")  # the arena's default for decide
        await conn.send({"type": "bye"})
        await finish(task)


async def test_retries_stop_when_every_legal_answer_was_tried():
    async with ScriptedServer() as server:
        task = asyncio.create_task(client_for(server).run())
        conn = await server.accept()
        await conn.handshake()
        await conn.send(request(legal=["AS"]))
        assert (await conn.expect("action"))["action"] == "AS"
        await conn.send(Error(ErrorCode.ILLEGAL_ACTION, "no", id=1))
        await conn.send(Event("m1", {"kind": "play", "seat": 1, "card": "AS"}))
        await conn.send({"type": "bye"})
        # No second action: the only legal answer was already refused.
        assert await conn.receive() is None
        await finish(task)


@pytest.mark.parametrize(
    ("strategy", "expected"),
    [
        (lambda p, legal, s: 1 / 0, []),  # raises
        (lambda p, legal, s: ["KC"], []),  # not legal
        (lambda p, legal, s: ["9S", "7H"], ["7H", "9S"]),  # a set: order does not matter
        (lambda p, legal, s: ("7H",), ["7H"]),  # a tuple stands for an array
    ],
)
async def test_bad_answers_become_the_default_and_sets_are_matched(strategy, expected):
    async with ScriptedServer() as server:
        task = asyncio.create_task(client_for(server, strategy).run())
        conn = await server.accept()
        await conn.handshake()
        await conn.send(request(phase="exchange", legal=[[], ["7H"], ["9S"], ["7H", "9S"]]))
        assert (await conn.expect("action"))["action"] == expected
        await conn.send({"type": "bye"})
        await finish(task)


@pytest.mark.parametrize(("deadline_ms", "budget_s"), [(2000, 1.9), (500, 0.4), (200, 0.16), (0, 0.0)])
def test_the_strategy_may_think_until_the_deadline_less_a_margin(deadline_ms, budget_s):
    # 0.1 s for the network, at most a fifth of a short deadline.
    assert BotClient("127.0.0.1", 1, "tok", "bot-a", first_legal)._budget(deadline_ms) == pytest.approx(budget_s)


@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_a_slow_strategy_is_overruled_once_its_budget_is_spent(kind):
    release = threading.Event()
    finished: list[bool] = []

    def slow(phase, legal, state):
        release.wait(30)
        finished.append(True)
        return legal[-1]

    async def slow_async(phase, legal, state):
        await asyncio.sleep(30)
        finished.append(True)
        return legal[-1]

    async with ScriptedServer() as server:
        client = client_for(server, slow if kind == "sync" else slow_async)
        task = asyncio.create_task(client.run())
        conn = await server.accept()
        await conn.handshake()
        loop = asyncio.get_running_loop()
        sent = loop.time()
        await conn.send(request(phase="decide", legal=["enter", "fold"], deadline_ms=2000))
        answer = await conn.expect("action", timeout=20)
        elapsed = loop.time() - sent
        # The SDK's default, marked as such, sent while the strategy still
        # thought, and not before its 1.9 s were spent. (When it arrives
        # on a loaded machine is the network's and the scheduler's: the
        # margin is what the SDK leaves them.)
        assert answer["action"] == "fold"
        assert answer[FALLBACK_FIELD]["reason"] == "timeout"
        assert finished == []
        assert elapsed >= 1.9
        release.set()
        await conn.send({"type": "bye"})
        await finish(task)


async def test_reconnects_after_a_drop_and_keeps_playing():
    async with ScriptedServer() as server:
        client = client_for(server)
        task = asyncio.create_task(client.run())
        conn = await server.accept()
        await conn.handshake()
        await conn.send(match_start())
        await conn.send(Event("m1", {"kind": "commit", "round": 0, "hand": 0, "commitment": "x"}))
        await conn.close()  # the server drops the connection

        conn2 = await server.accept()
        assert (await conn2.handshake())["token"] == "tok"
        await conn2.send(match_start())
        await conn2.send(request(id=9, legal=["AS"]))
        assert (await conn2.expect("action"))["id"] == 9
        assert client.connections == 2
        assert client.matches["m1"].commits == {(0, 0): "x"}  # kept across the reconnect
        await conn2.send({"type": "bye"})
        await finish(task)


async def test_without_reconnect_a_drop_is_an_error():
    async with ScriptedServer() as server:
        task = asyncio.create_task(client_for(server, reconnect=False).run())
        conn = await server.accept()
        await conn.handshake()
        await conn.close()
        with pytest.raises(ConnectionLostError):
            await finish(task)


async def test_reconnecting_gives_up_after_the_attempts_are_spent():
    async with ScriptedServer() as server:
        task = asyncio.create_task(client_for(server, max_reconnect_attempts=2).run())
        conn = await server.accept()
        await conn.handshake()
    # The server is gone after a welcome: the client retries, then gives up.
    with pytest.raises(ConnectionLostError, match="2 reconnect attempts"):
        await asyncio.wait_for(task, 5)


async def test_a_server_never_reached_stops_the_bot_after_a_few_quick_tries():
    async with ScriptedServer() as server:
        port = server.port
    client = BotClient("127.0.0.1", port, "tok", None, first_legal, max_reconnect_attempts=10,
                       backoff_initial_s=0.01)
    with pytest.raises(ServerUnreachableError, match=f"cannot reach the arena at 127.0.0.1:{port}"):
        await asyncio.wait_for(client.run(), 5)


async def test_a_refused_hello_stops_the_bot():
    async with ScriptedServer() as server:
        task = asyncio.create_task(client_for(server).run())
        conn = await server.accept()
        await conn.expect("hello")
        await conn.send(Error(ErrorCode.AUTH_FAILED, "unknown token"))
        await conn.close()
        with pytest.raises(HandshakeError, match="auth_failed"):
            await finish(task)


async def test_max_matches_says_bye_and_verifies_the_deals():
    deck = ["7H", "8H", "AS"]
    ended = []

    async with ScriptedServer() as server:
        client = client_for(server, max_matches=1, on_match_end=lambda info, end: ended.append(info))
        task = asyncio.create_task(client.run())
        conn = await server.accept()
        await conn.handshake()
        await conn.send(match_start())
        await conn.send(Event("m1", {"kind": "commit", "round": 0, "hand": 0, "commitment": commitment("s0", deck)}))
        await conn.send(Event("m1", {"kind": "commit", "round": 0, "hand": 1, "commitment": commitment("s1", deck)}))
        reveal = [
            {"round": 0, "hand": 0, "salt": "s0", "deck": deck},
            {"round": 0, "hand": 1, "salt": "s1", "deck": deck[::-1]},  # changed after the commitment
        ]
        await conn.send(MatchEnd("m1", {"stars": [1, 0, 0, 0, 0]}, reveal))
        assert await conn.expect("bye") == {"type": "bye"}
        await finish(task)
    assert client.matches_played == 1 and client.matches == {}
    (info,) = ended
    assert info.result == {"stars": [1, 0, 0, 0, 0]}
    assert info.deal_problems == ["round 0 hand 1: deck does not match its commitment"]


async def test_hooks_see_the_match_start_and_events():
    seen = []

    async def on_event(info, event):
        seen.append((info.match, event["kind"]))

    async with ScriptedServer() as server:
        client = client_for(server, on_match_start=lambda info: seen.append(("start", info.seat)), on_event=on_event)
        task = asyncio.create_task(client.run())
        conn = await server.accept()
        await conn.handshake()
        await conn.send(match_start(seat=4))
        await conn.send(Event("m1", {"kind": "play", "seat": 0, "card": "AS"}))
        await conn.send({"type": "bye"})
        await finish(task)
    assert seen == [("start", 4), ("m1", "play")]


async def test_unknown_and_invalid_server_messages_are_skipped():
    async with ScriptedServer() as server:
        task = asyncio.create_task(client_for(server).run())
        conn = await server.accept()
        await conn.handshake()
        await conn.send({"type": "weather", "sunny": True})
        await conn.send({"type": "request", "match": "m1"})  # missing fields
        await conn.send(request(id=2))
        assert (await conn.expect("action"))["id"] == 2
        await conn.send({"type": "bye"})
        await finish(task)


async def test_stop_says_bye():
    async with ScriptedServer() as server:
        client = client_for(server)
        task = asyncio.create_task(client.run())
        conn = await server.accept()
        await conn.handshake()
        await client.stop()
        assert await conn.expect("bye") == {"type": "bye"}
        await finish(task)


async def test_cancelling_the_bot_says_bye_and_closes():
    async with ScriptedServer() as server:
        task = asyncio.create_task(client_for(server).run())
        conn = await server.accept()
        await conn.handshake()
        task.cancel()
        assert await conn.expect("bye") == {"type": "bye"}
        assert await conn.receive() is None
        with pytest.raises(asyncio.CancelledError):
            await task
