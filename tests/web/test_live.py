"""The live hub, the metrics, and the SSE stream that carries the hub out."""

from __future__ import annotations

import asyncio
import json

import pytest
from aiohttp.test_utils import TestClient

from arena.metrics import MAX_ERROR_CODES, Metrics
from arena.live import HubFullError, LiveHub

TIMEOUT = 5.0


async def take(sub, n: int) -> list[dict]:
    return [await asyncio.wait_for(anext(sub), TIMEOUT) for _ in range(n)]


# -- hub -------------------------------------------------------------------------
async def test_subscribers_get_what_is_published_on_their_channels() -> None:
    hub = LiveHub()
    async with hub.subscribe("standings:ladder", "matches") as sub:
        hub.standings_changed("cup")  # another scope: not for us
        hub.standings_changed("ladder")
        hub.match_started("m1", {"game": "muushig", "players": ["a"]})
        got = await take(sub, 2)
    assert got == [{"type": "standings_changed", "scope": "ladder"},
                   {"type": "match_started", "match": "m1",
                    "info": {"game": "muushig", "players": ["a"]}}]
    assert hub.subscriber_count == 0


async def test_tournament_channel_carries_progress_and_its_standings() -> None:
    hub = LiveHub()
    async with hub.subscribe("tournament:cup") as sub, hub.subscribe("tournaments") as every:
        hub.tournament_progress("cup", 3, 10)
        hub.standings_changed("cup")
        hub.tournament_progress("other", 1, 2)
        got = await take(sub, 2)
        overall = await take(every, 2)
    assert got[0] == {"type": "progress", "tournament": "cup", "done": 3, "total": 10}
    assert got[1]["type"] == "standings_changed"
    assert [m["tournament"] for m in overall] == ["cup", "other"]


async def test_public_log_of_a_live_match_and_shortly_after() -> None:
    hub = LiveHub(clock=lambda: 42.0)
    hub.match_started("m", {"players": ["a"]})
    hub.match_events("m", [({"kind": "play", "seat": 0, "card": "AS"}, None)])
    hub.match_events("m", [({"kind": "trick", "winner": 0}, None)])
    assert hub.public_log("m") == [
        {"seq": 0, "at": 42.0, "data": {"kind": "play", "seat": 0, "card": "AS"}},
        {"seq": 1, "at": 42.0, "data": {"kind": "trick", "winner": 0}}]
    assert [m["id"] for m in hub.live_matches()] == ["m"]
    hub.match_ended("m", {"result": {}})
    assert hub.live_matches() == []
    assert len(hub.public_log("m")) == 2  # kept a moment for pages catching up
    assert hub.public_log("unknown") is None


async def test_logs_and_ended_matches_are_bounded() -> None:
    hub = LiveHub(max_log_events=3, keep_ended=2)
    hub.match_started("m", {})
    for i in range(5):
        hub.match_events("m", [({"kind": "play", "i": i}, None)])
    assert [e["seq"] for e in hub.public_log("m")] == [2, 3, 4]
    assert hub.live_info("m")["truncated"] is True
    for name in ("a", "b", "c"):
        hub.match_started(name, {})
        hub.match_ended(name, {})
    assert hub.public_log("a") is None and hub.public_log("c") == []


async def test_a_slow_subscriber_loses_the_oldest_messages_and_is_told() -> None:
    hub = LiveHub(queue_size=3)
    async with hub.subscribe("standings:ladder") as sub:
        for _ in range(5):
            hub.standings_changed("ladder")
        assert sub.lost == 2
        got = await take(sub, 4)
    assert got[0] == {"type": "gap", "lost": 2}
    assert all(m["type"] == "standings_changed" for m in got[1:])


async def test_publishing_never_waits_for_subscribers() -> None:
    hub = LiveHub(queue_size=2)
    async with hub.subscribe("match:m") as sub:
        hub.match_started("m", {})
        for i in range(10_000):  # nobody reads: must not block or grow
            hub.match_events("m", [({"kind": "play", "i": i}, None)])
        assert len(sub._queue) == 2


async def test_subscriber_limit() -> None:
    hub = LiveHub(max_subscribers=1)
    async with hub.subscribe("matches"):
        with pytest.raises(HubFullError):
            async with hub.subscribe("matches"):
                pass
    async with hub.subscribe("matches"):
        pass


async def test_close_ends_every_subscription() -> None:
    hub = LiveHub()
    async with hub.subscribe("matches") as sub:
        waiter = asyncio.ensure_future(anext(sub))
        await asyncio.sleep(0)
        hub.close()
        with pytest.raises(StopAsyncIteration):
            await asyncio.wait_for(waiter, TIMEOUT)


async def test_cancelled_wait_loses_nothing() -> None:
    hub = LiveHub()
    async with hub.subscribe("matches") as sub:
        waiter = asyncio.ensure_future(anext(sub))
        await asyncio.sleep(0)
        waiter.cancel()
        hub.match_started("m", {})
        assert (await take(sub, 1))[0]["type"] == "match_started"


# -- metrics -------------------------------------------------------------------------
class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_decisions_per_second_over_a_sliding_window() -> None:
    clock = FakeClock()
    m = Metrics(window_s=10, clock=clock)
    for _ in range(10):
        for _ in range(20):
            m.decisions_total += 1
        clock.now += 1
    assert m.decisions_total == 200
    assert m.decisions_per_second() == pytest.approx(18.0, abs=2.0)
    clock.now += 30  # idle: the window empties
    assert m.decisions_per_second() == 0.0
    assert m.decisions_total == 200


def test_decisions_the_session_counts_reach_the_rate_by_sampling() -> None:
    """The match session only adds to ``decisions_total`` (no call per
    decision); the server's one-second sample puts them in the window."""
    clock = FakeClock()
    m = Metrics(window_s=10, clock=clock)
    for _ in range(10):
        m.decisions_total += 20
        clock.now += 0.5
        m.sample()  # the server's sampler, once a second
        clock.now += 0.5
    assert m.decisions_per_second() == pytest.approx(18.0, abs=2.0)
    m.decisions_total += 50  # counted since the last sample: a read samples first
    assert m.decisions_per_second() == pytest.approx(23.0, abs=2.0)
    clock.now += 30
    assert m.decisions_per_second() == 0.0


def test_error_codes_are_bounded() -> None:
    m = Metrics()
    for i in range(MAX_ERROR_CODES + 10):
        m.error(f"code{i}")
    assert len(m.errors_total) == MAX_ERROR_CODES + 1
    assert m.errors_total["other"] == 10


def test_snapshot_and_exposition_agree() -> None:
    m = Metrics()
    m.decisions_total += 1
    m.timeout()
    m.illegal()
    m.match_finished()
    m.match_aborted()
    m.error('we"ird\\code')
    m.bots_connected = 4
    snap = m.snapshot()
    assert {k: snap[k] for k in ("decisions_total", "timeouts_total", "illegal_total",
                                 "matches_finished_total", "matches_aborted_total",
                                 "bots_connected")} == {
        "decisions_total": 1, "timeouts_total": 1, "illegal_total": 1,
        "matches_finished_total": 1, "matches_aborted_total": 1, "bots_connected": 4}
    text = m.render_prometheus()
    assert 'arena_errors_total{code="we\\"ird\\\\code"} 1' in text
    families = [line.split()[2] for line in text.splitlines() if line.startswith("# TYPE")]
    assert len(families) == len(set(families))
    for family in families:
        assert f"# HELP {family} " in text


# -- SSE ---------------------------------------------------------------------------------
async def read_messages(response, n: int) -> list[dict]:
    out: list[dict] = []
    while len(out) < n:
        line = await asyncio.wait_for(response.content.readline(), TIMEOUT)
        assert line, "stream closed early"
        if line.startswith(b"data: "):
            out.append(json.loads(line[6:]))
    return out


async def wait_for_subscribers(hub: LiveHub, n: int) -> None:
    async with asyncio.timeout(TIMEOUT):
        while hub.subscriber_count < n:
            await asyncio.sleep(0.01)


async def test_sse_stream_of_standings(client: TestClient, hub: LiveHub) -> None:
    response = await client.get("/api/live?channel=standings:ladder&channel=matches")
    assert response.status == 200
    assert response.headers["Content-Type"].startswith("text/event-stream")
    await wait_for_subscribers(hub, 1)
    hub.standings_changed("ladder")
    hub.match_started("m", {"players": ["a"]})
    got = await read_messages(response, 2)
    assert [m["type"] for m in got] == ["standings_changed", "match_started"]
    response.close()


async def test_sse_replays_a_match_after_a_seq_without_duplicates(client: TestClient,
                                                                  hub: LiveHub) -> None:
    hub.match_started("m", {})
    for i in range(4):
        hub.match_events("m", [({"kind": "play", "i": i}, None)])
    response = await client.get("/api/live?channel=match:m&after=1")
    await wait_for_subscribers(hub, 1)
    hub.match_events("m", [({"kind": "play", "i": 4}, None)])
    hub.match_ended("m", {"result": None})
    got = await read_messages(response, 4)
    assert [m.get("seq") for m in got] == [2, 3, 4, None]
    assert got[-1]["type"] == "match_ended"
    response.close()


@pytest.mark.parametrize("query", ["", "channel=bogus", "channel=match:", "channel=match:a/b",
                                   "&".join(["channel=matches"] * 2 + ["channel=match:a",
                                             "channel=match:b", "channel=match:c"]),
                                   "channel=match:a&after=x"])
async def test_sse_bad_channels_are_400(client: TestClient, query: str) -> None:
    response = await client.get(f"/api/live?{query}")
    assert response.status == 400
    assert (await response.json())["error"]["status"] == 400


async def test_sse_when_the_hub_is_full(store, metrics) -> None:
    from aiohttp.test_utils import TestServer

    from arena.web.app import make_app
    hub = LiveHub(max_subscribers=0)
    async with TestClient(TestServer(make_app(store, hub=hub, metrics=metrics))) as c:
        response = await c.get("/api/live?channel=matches")
        assert response.status == 503
        assert response.headers["Retry-After"]


async def test_shutdown_ends_open_streams(store, metrics) -> None:
    import aiohttp
    from aiohttp.test_utils import TestServer

    from arena.web.app import make_app
    hub = LiveHub()
    server = TestServer(make_app(store, hub=hub, metrics=metrics))
    await server.start_server()
    async with aiohttp.ClientSession() as session:
        response = await session.get(server.make_url("/api/live?channel=matches"))
        await wait_for_subscribers(hub, 1)
        async with asyncio.timeout(TIMEOUT):
            await server.close()  # the viewer is still connected
            assert await response.content.read() == b"retry: 3000\n\n"  # then EOF
        assert hub.subscriber_count == 0
