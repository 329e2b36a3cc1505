"""The store writer: ordered, batched, bounded, and the loop never waits on disk."""

from __future__ import annotations

import asyncio
import threading

import pytest
from structlog.testing import capture_logs

from arena.storage.base import MatchStatus, StorageError
from arena.storage import open_store
from arena.storage.writer import EventLogError, StoreWriter, WriterClosedError

from .helpers import events, finish_kwargs, match


@pytest.fixture
def store(db_location):
    """A SQLite file or a PostgreSQL database (see conftest)."""
    s = open_store(db_location)
    yield s
    s.close()


async def test_events_then_result_arrive_in_order(store):
    async with StoreWriter(store) as writer:
        await writer.create_match(match("m1"))
        for i in range(0, 50, 5):
            await writer.append_events("m1", events(i, 5))
        await writer.finish_match("m1", **finish_kwargs())
    assert [e.seq for e in store.get_events("m1")] == list(range(50))
    assert store.get_match("m1").status is MatchStatus.FINISHED


async def test_appends_are_coalesced_into_few_transactions(store):
    writer = StoreWriter(store, batch_events=1000, flush_delay=0.05)
    for m in ("m1", "m2", "m3"):
        await writer.create_match(match(m))
    for i in range(100):  # 300 single-event appends, no await on disk in between
        for m in ("m1", "m2", "m3"):
            writer.append_events_nowait(m, events(i, 1))
    await writer.flush()
    assert writer.events_written == 300
    assert writer.batches_written == 1  # one transaction for all three matches
    await writer.close()
    assert all(len(store.get_events(m)) == 100 for m in ("m1", "m2", "m3"))


async def test_a_large_backlog_is_handed_over_without_waiting_for_the_timer(store):
    writer = StoreWriter(store, batch_events=10, flush_delay=60.0)
    await writer.create_match(match("m1"))
    await writer.append_events("m1", events(0, 10))  # reaches batch_events
    for _ in range(200):
        if writer.events_written == 10:
            break
        await asyncio.sleep(0.01)
    assert writer.events_written == 10
    await writer.close()


async def test_the_timer_flushes_a_small_batch(store):
    writer = StoreWriter(store, batch_events=1000, flush_delay=0.001)
    await writer.create_match(match("m1"))
    await writer.append_events("m1", events(0, 1))
    for _ in range(500):
        if writer.events_written == 1:
            break
        await asyncio.sleep(0.01)
    assert store.get_events("m1") == events(0, 1)
    await writer.close()


async def test_a_refused_batch_blocks_the_result_and_is_logged(store):
    writer = StoreWriter(store)
    await writer.create_match(match("m1"))
    await writer.create_match(match("m2"))
    with capture_logs() as logs:
        await writer.append_events("m1", events(0, 2))
        await writer.append_events("m1", events(5, 1))  # a gap: refused
        await writer.append_events("m2", events(0, 1))
        with pytest.raises(EventLogError, match="m1.*incomplete"):
            await writer.finish_match("m1", **finish_kwargs())
    assert any(e["event"] == "storage.events_refused" and e["match"] == "m1" for e in logs)
    assert store.get_match("m1").status is MatchStatus.RUNNING  # not counted
    await writer.abort_match("m1", "event log incomplete")
    await writer.finish_match("m2", **finish_kwargs())  # the other match is unaffected
    assert store.get_match("m2").status is MatchStatus.FINISHED
    await writer.close()


async def test_store_errors_reach_the_caller(store):
    async with StoreWriter(store) as writer:
        with pytest.raises(StorageError, match="no match"):
            await writer.finish_match("ghost", **finish_kwargs())
        await writer.add_bot("ann", "h")
        with pytest.raises(StorageError):
            await writer.add_bot("ann", "h2")
        assert (await writer.ensure_bot("ann")).token_hash == "h"


async def test_back_pressure_makes_appenders_wait_for_the_disk(store):
    gate, entered = threading.Event(), threading.Event()
    slow_calls = 0
    real = store.append_events_many

    def slow_append(batches):
        nonlocal slow_calls
        slow_calls += 1
        entered.set()
        gate.wait(10)  # the "disk" is stuck until the test opens the gate
        return real(batches)

    store.append_events_many = slow_append
    writer = StoreWriter(store, batch_events=5, max_backlog=10, flush_delay=0.001)
    await writer.create_match(match("m1"))
    await writer.append_events("m1", events(0, 5))
    await writer.append_events("m1", events(5, 5))  # backlog now 10 = full
    blocked = asyncio.create_task(writer.append_events("m1", events(10, 5)))
    assert await asyncio.to_thread(entered.wait, 5)  # the writer thread is stuck
    for _ in range(20):
        await asyncio.sleep(0)
    assert not blocked.done() and writer._backlog == 10
    gate.set()
    await asyncio.wait_for(blocked, 5)
    await writer.flush()
    assert [e.seq for e in store.get_events("m1")] == list(range(15))
    assert slow_calls >= 2
    await writer.close()


async def test_the_loop_stays_responsive_while_the_disk_is_slow(store):
    gate = threading.Event()
    store_finish = store.finish_match

    def slow_finish(*args, **kwargs):
        gate.wait(10)
        return store_finish(*args, **kwargs)

    store.finish_match = slow_finish
    writer = StoreWriter(store)
    await writer.create_match(match("m1"))
    finishing = asyncio.create_task(writer.finish_match("m1", **finish_kwargs()))
    ticks = 0
    for _ in range(5):  # the loop keeps running other work meanwhile
        await asyncio.sleep(0)
        ticks += 1
    assert ticks == 5 and not finishing.done()
    # reads go straight to the store (its own connection) and are not queued
    assert (await writer.read(store.get_match, "m1")).status is MatchStatus.RUNNING
    gate.set()
    await asyncio.wait_for(finishing, 5)
    assert store.get_match("m1").status is MatchStatus.FINISHED
    await writer.close()


async def test_concurrent_tables_and_readers(store):
    """Eight tables write while readers poll; every log comes out whole."""
    writer = StoreWriter(store, batch_events=64, flush_delay=0.002)
    torn: list[str] = []

    async def table(n: int) -> None:
        mid = f"m{n}"
        await writer.create_match(match(mid, started_at=1000.0 + n))
        for i in range(0, 200, 4):
            await writer.append_events(mid, events(i, 4))
            if i % 40 == 0:
                await asyncio.sleep(0)
        await writer.finish_match(mid, **finish_kwargs())

    async def reader(stop: asyncio.Event) -> None:
        while not stop.is_set():
            for m in await writer.read(store.list_matches):
                seqs = [e.seq for e in await writer.read(store.get_events, m.id)]
                if seqs != list(range(len(seqs))):
                    torn.append(m.id)
            await asyncio.sleep(0.001)

    stop = asyncio.Event()
    async with asyncio.TaskGroup() as tg:
        readers = [tg.create_task(reader(stop)) for _ in range(2)]
        async with asyncio.TaskGroup() as tables:
            for n in range(8):
                tables.create_task(table(n))
        stop.set()
    assert all(r.done() for r in readers) and not torn
    assert store.count_matches(status=MatchStatus.FINISHED) == 8
    assert all(len(store.get_events(f"m{n}")) == 200 for n in range(8))
    await writer.close()


async def test_close_commits_pending_events_and_then_refuses_calls(store):
    writer = StoreWriter(store, flush_delay=60.0)
    await writer.create_match(match("m1"))
    writer.append_events_nowait("m1", events(0, 3))
    await writer.close()
    await writer.close()  # idempotent
    assert len(store.get_events("m1")) == 3
    with pytest.raises(WriterClosedError):
        await writer.create_match(match("m2"))
    with pytest.raises(WriterClosedError):
        writer.append_events_nowait("m1", events(3, 1))


def test_bad_limits_are_refused(store):
    with pytest.raises(ValueError):
        StoreWriter(store, batch_events=100, max_backlog=10)
