"""The store writer's batches: few, large writes, and a cheap hand-over on the loop.

Before: every ``create_match`` and ``finish_match`` handed the events of all
running matches to the thread, so at 200 tables a batch went out about every
40 ms (one tiny ``event_blocks`` row per match each time), and every record a
table handed over became a tuple of its own on the loop.
"""

from __future__ import annotations

import asyncio
import gc
import sys

import pytest

from arena.storage import open_store
from arena.storage.base import MatchStatus
from arena.storage.writer import EventLogError, StoreWriter

from .helpers import finish_kwargs, match


@pytest.fixture
def store(db_location):
    """A SQLite file or a PostgreSQL database (see conftest)."""
    s = open_store(db_location)
    yield s
    s.close()


def texts(start: int, count: int) -> list[str]:
    return [f'{{"kind":"play","n":{i}}}' for i in range(start, start + count)]


def block_rows(store, match_id: str) -> int:
    with store.db.read() as db:
        return int(db.execute("SELECT COUNT(*) FROM event_blocks WHERE match_id = ?",
                              (match_id,)).fetchone()[0])


async def test_finishing_a_match_leaves_the_other_matches_events_buffered(store):
    writer = StoreWriter(store, flush_delay=60.0)
    for m in ("m1", "m2"):
        await writer.create_match(match(m))
        writer.append_encoded_nowait(m, 0, 2000.0, texts(0, 3))
    await writer.finish_match("m1", **finish_kwargs())
    assert [e.data["n"] for e in store.get_events("m1")] == [0, 1, 2]
    assert store.get_match("m1").status is MatchStatus.FINISHED
    assert store.get_events("m2") == []  # still buffered: no batch for a finish
    await writer.flush()
    assert [e.data["n"] for e in store.get_events("m2")] == [0, 1, 2]
    await writer.close()


async def test_creating_a_match_leaves_buffered_events_buffered(store):
    writer = StoreWriter(store, flush_delay=60.0)
    await writer.create_match(match("m1"))
    writer.append_encoded_nowait("m1", 0, 2000.0, texts(0, 2))
    await writer.create_match(match("m2"))
    assert store.get_events("m1") == []
    await writer.close()
    assert len(store.get_events("m1")) == 2


async def test_steps_between_other_matches_starts_and_ends_make_one_row_per_match(store):
    """Twenty tables step while other matches start and end: each running
    match's log gains one row per flush, not one per start or end."""
    writer = StoreWriter(store, flush_delay=60.0)
    running = [f"r{n}" for n in range(20)]
    for m in running:
        await writer.create_match(match(m))
    for step in range(10):
        for m in running:
            writer.append_encoded_nowait(m, step * 2, 2000.0 + step, texts(step * 2, 2))
        other = f"o{step}"
        await writer.create_match(match(other))
        writer.append_encoded_nowait(other, 0, 2000.0, texts(0, 1))
        await writer.finish_match(other, **finish_kwargs())
    await writer.flush()
    assert [block_rows(store, m) for m in running] == [1] * 20
    for m in running:
        events = store.get_events(m)
        assert [e.seq for e in events] == list(range(20))
        assert [e.at for e in events] == [2000.0 + s for s in range(10) for _ in range(2)]
    await writer.close()


async def test_a_gap_in_handed_records_blocks_the_result(store):
    writer = StoreWriter(store, flush_delay=60.0)
    await writer.create_match(match("m1"))
    writer.append_encoded_nowait("m1", 0, 2000.0, texts(0, 2))
    writer.append_encoded_nowait("m1", 5, 2001.0, texts(5, 1))  # seqs 2..4 are missing
    with pytest.raises(EventLogError, match="m1.*incomplete.*seq 5 does not continue"):
        await writer.finish_match("m1", **finish_kwargs())
    assert store.get_match("m1").status is MatchStatus.RUNNING
    await writer.abort_match("m1", "event log incomplete")
    assert store.get_match("m1").status is MatchStatus.ABORTED
    await writer.close()


async def test_a_log_that_does_not_continue_the_stored_one_blocks_the_result(store):
    writer = StoreWriter(store, flush_delay=60.0)
    await writer.create_match(match("m1"))
    writer.append_encoded_nowait("m1", 0, 2000.0, texts(0, 2))
    await writer.flush()
    writer.append_encoded_nowait("m1", 1, 2001.0, texts(1, 1))  # seq 1 is stored already
    with pytest.raises(EventLogError, match="seq 1 does not continue.*expected 2"):
        await writer.finish_match("m1", **finish_kwargs())
    await writer.close()


async def test_aborting_stores_the_matchs_buffered_events_first(store):
    writer = StoreWriter(store, flush_delay=60.0)
    await writer.create_match(match("m1"))
    writer.append_encoded_nowait("m1", 0, 2000.0, texts(0, 3))
    await writer.abort_match("m1", "seats left")
    assert store.get_match("m1").status is MatchStatus.ABORTED
    assert [e.seq for e in store.get_events("m1")] == [0, 1, 2]
    await writer.close()


async def test_a_finish_after_a_refused_batch_is_refused(store):
    """The refusal of a batch handed over by the timer reaches the finish."""
    writer = StoreWriter(store, flush_delay=60.0)
    await writer.create_match(match("m1"))
    writer.append_encoded_nowait("m1", 3, 2000.0, texts(3, 1))  # the log starts at 0
    await writer.flush()
    with pytest.raises(EventLogError, match="m1.*incomplete"):
        await writer.finish_match("m1", **finish_kwargs())
    await writer.close()


@pytest.mark.parametrize("db_location", ["sqlite"], indirect=True)
async def test_handing_over_records_makes_no_object_per_record(store):
    writer = StoreWriter(store, flush_delay=60.0, batch_events=100_000, max_backlog=100_000)
    await writer.create_match(match("m1"))
    steps, per_step = 500, 4
    batch = texts(0, per_step)
    writer.append_encoded_nowait("m1", 0, 2000.0, batch)
    gc.disable()
    try:
        before = sys.getallocatedblocks()
        for step in range(1, steps + 1):
            writer.append_encoded_nowait("m1", step * per_step, 2000.0, batch)
        grown = sys.getallocatedblocks() - before
    finally:
        gc.enable()
    assert grown < steps // 4  # one list grows; no tuple or list per step or record
    await writer.close()
    assert len(store.get_events("m1")) == (steps + 1) * per_step


@pytest.mark.parametrize("db_location", ["sqlite"], indirect=True)
async def test_a_running_matchs_events_are_written_within_about_a_second(store):
    """The bound docs/reliability.md gives for what a crash can lose."""
    writer = StoreWriter(store)
    await writer.create_match(match("m1"))
    writer.append_encoded_nowait("m1", 0, 2000.0, texts(0, 1))
    for _ in range(150):
        if writer.events_written == 1:
            break
        await asyncio.sleep(0.01)
    assert writer.events_written == 1 and len(store.get_events("m1")) == 1
    await writer.close()
