"""A live match's viewers, whenever they come, get every public event once
and in order, while the hub keeps only a recent tail of each match."""

from __future__ import annotations

import asyncio
import time
import tracemalloc
from typing import Any, AsyncIterator

import pytest
from aiohttp.test_utils import TestClient, TestServer

from arena.live import LiveHub
from arena.storage.base import MatchRecord, MatchStatus, StoredEvent
from arena.storage.sqlite import SqliteStore
from arena.web.app import make_app

from .live_match import play
from .test_live import read_messages  # the SSE reader of the hub's own tests
from tests.timing import MS

TAIL = 16
TIMEOUT = 5.0


def kept_bytes(events: int) -> int:
    """Memory an unwatched match holds in the hub after ``events`` events."""
    tracemalloc.start()
    try:
        hub = LiveHub()
        hub.match_started("m", {"game": "muushig", "players": ["a"] * 5})
        before = tracemalloc.get_traced_memory()[0]
        for i in range(events):
            hub.match_events("m", [({"kind": "play", "seat": i % 5, "card": "QH", "n": i}, None)])
        return tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()


def test_an_unwatched_match_keeps_a_bounded_amount_however_long() -> None:
    short, long = kept_bytes(2_000), kept_bytes(20_000)
    assert long < 64 * 1024  # a few dozen kilobytes at most, not the whole match
    assert long < short * 1.2


def mid_match() -> tuple[dict[str, Any], list, list]:
    """Rules, stored records and public events of a muushig match halfway."""
    checkpoints = list(play("muushig", {"max_hands": 2}, seed=3))
    rules, stored, shown = checkpoints[len(checkpoints) // 2]
    assert len(shown) > 4 * TAIL
    return rules, stored, shown


@pytest.fixture
async def live(store: SqliteStore, metrics) -> AsyncIterator[tuple[TestClient, LiveHub]]:
    hub = LiveHub(tail_events=TAIL)
    async with TestClient(TestServer(make_app(store, hub=hub, metrics=metrics))) as c:
        yield c, hub


def start(store: SqliteStore, hub: LiveHub, rules: dict[str, Any], stored: list,
          shown: list) -> None:
    """The match as the server leaves it: running in the store with the
    records written so far, every public event published to the hub."""
    players = [f"s{i}" for i in range(5)]
    for name in players:
        store.ensure_bot(name)
    store.create_match(MatchRecord(
        id="m", game="muushig", players=players, rules=rules,
        limits={"decision_ms": 1000, "bank_ms": 0}, status=MatchStatus.RUNNING,
        started_at=time.time()))
    store.append_events("m", [StoredEvent(seq, at, data) for seq, at, data in stored])
    hub.match_started("m", {"game": "muushig", "players": players, "tournament_id": None,
                            "started_at": time.time()})
    for public in shown:
        hub.match_events("m", [(public, None)])


async def test_a_viewer_who_opens_a_long_match_late_gets_every_event_once_in_order(
        live: tuple[TestClient, LiveHub], store: SqliteStore) -> None:
    client, hub = live
    rules, stored, shown = mid_match()
    start(store, hub, rules, stored, shown)
    assert len(hub.public_log("m")) == TAIL  # the hub holds the tail only

    detail = await (await client.get("/api/matches/m")).json()
    assert detail["live"] is True and detail["truncated"] is False
    assert [e["seq"] for e in detail["events"]] == list(range(len(shown)))
    assert [e["data"] for e in detail["events"]] == shown
    page = await (await client.get("/api/matches/m/events?limit=10000")).json()
    assert [e["data"] for e in page["events"]] == shown


async def test_a_stream_resumed_before_the_tail_replays_every_later_event_once(
        live: tuple[TestClient, LiveHub], store: SqliteStore) -> None:
    client, hub = live
    rules, stored, shown = mid_match()
    start(store, hub, rules, stored, shown)
    response = await client.get("/api/live?channel=match:m&after=2")
    async with asyncio.timeout(TIMEOUT):
        while hub.subscriber_count < 1:
            await asyncio.sleep(0.01)
    hub.match_events("m", [({"kind": "later", "n": 1}, None)])
    got = await read_messages(response, len(shown) - 3 + 1)
    assert [m["seq"] for m in got] == list(range(3, len(shown) + 1))
    assert [m["data"] for m in got] == shown[3:] + [{"kind": "later", "n": 1}]
    response.close()


async def test_a_store_a_moment_behind_the_tail_is_waited_for(
        live: tuple[TestClient, LiveHub], store: SqliteStore) -> None:
    client, hub = live
    rules, stored, shown = mid_match()
    behind = len(stored) // 2
    start(store, hub, rules, stored[:behind], shown)

    async def catch_up() -> None:
        await asyncio.sleep(0.2)
        store.append_events("m", [StoredEvent(s, at, d) for s, at, d in stored[behind:]])

    writer = asyncio.ensure_future(catch_up())
    detail = await (await client.get("/api/matches/m")).json()
    await writer
    assert detail["truncated"] is False
    assert [e["data"] for e in detail["events"]] == shown


async def test_a_store_that_stays_behind_gives_the_tail_marked_truncated(
        live: tuple[TestClient, LiveHub], store: SqliteStore) -> None:
    client, hub = live
    rules, stored, shown = mid_match()
    start(store, hub, rules, stored[:len(stored) // 2], shown)
    detail = await (await client.get("/api/matches/m")).json()
    assert detail["truncated"] is True
    assert [e["seq"] for e in detail["events"]] == list(range(len(shown) - TAIL, len(shown)))


async def test_viewers_of_the_same_stretch_share_one_replay(
        live: tuple[TestClient, LiveHub], store: SqliteStore, monkeypatch) -> None:
    import arena.web.live_events as live_events

    replays = []
    real = live_events.public_history
    monkeypatch.setattr(live_events, "public_history",
                        lambda *a: replays.append(1) or real(*a))
    client, hub = live
    checkpoints = list(play("muushig", {"max_hands": 2}, seed=3))
    rules, stored, shown = checkpoints[len(checkpoints) // 2]
    _, stored_later, shown_later = checkpoints[-1]
    assert len(shown_later) - len(shown) > TAIL
    start(store, hub, rules, stored, shown)
    for _ in range(3):
        detail = await (await client.get("/api/matches/m")).json()
        assert [e["data"] for e in detail["events"]] == shown
    assert len(replays) == 1
    # The tail moves past the end of the rebuilt events: rebuilt once more.
    for public in shown_later[len(shown):]:
        hub.match_events("m", [(public, None)])
    store.append_events("m", [StoredEvent(seq, at, data)
                              for seq, at, data in stored_later[len(stored):]])
    detail = await (await client.get("/api/matches/m")).json()
    assert [e["data"] for e in detail["events"]] == shown_later
    assert len(replays) == 2


async def test_events_the_writer_still_holds_are_written_at_once_for_a_late_viewer(
        store: SqliteStore, metrics) -> None:
    # The writer batches a running match's events about once a second; a
    # viewer of a fast match must not wait for the batch (nor get a cut log).
    from arena.records import encode_record
    from arena.storage.writer import StoreWriter

    rules, stored, shown = mid_match()
    behind = len(stored) // 2
    hub = LiveHub(tail_events=TAIL)
    writer = StoreWriter(store, flush_delay=30.0)
    start(store, hub, rules, stored[:behind], shown)
    async with TestClient(TestServer(make_app(store, hub=hub, metrics=metrics,
                                              writer=writer))) as client:
        for seq, at, data in stored[behind:]:
            writer.append_encoded_nowait("m", seq, at, [encode_record(data)])
        t0 = time.monotonic()
        detail = await (await client.get("/api/matches/m")).json()
        waited = time.monotonic() - t0
        assert detail["truncated"] is False
        assert [e["data"] for e in detail["events"]] == shown
        # Not the 30 s the writer's batch would take.
        assert waited < 5000 * MS, f"the viewer waited {waited:.2f} s for the writer's batch"
    await writer.close()
