"""A table's pause while the store writer is full: the rules of its clock
and of the inputs it holds (sans-IO), and a bot that floods a paused match."""

from __future__ import annotations

import asyncio
import threading

import pytest

from arena.server.pause import HELD_ANSWERS_PER_SEAT, HeldInput, HeldKind, TablePause
from arena.storage.sqlite import SqliteStore
from arena.storage.writer import StoreWriter
from tests.server.test_session_table import FakeConn, make_table
from tests.storage.helpers import match


def test_the_clock_runs_with_the_loop_until_a_pause():
    pause = TablePause()
    assert pause.clock(100.0) == 100.0 and not pause.paused


def test_the_clock_stands_still_during_a_pause():
    pause = TablePause()
    pause.begin(100.0)
    assert pause.clock(100.0) == pause.clock(163.5) == 100.0


def test_after_a_pause_the_clock_runs_on_from_the_paused_instant():
    pause = TablePause()
    pause.begin(100.0)
    pause.end(130.0)
    assert pause.clock(130.0) == 100.0 and pause.clock(131.0) == 101.0


def test_pauses_add_up():
    pause = TablePause()
    pause.begin(10.0)
    pause.end(12.0)
    pause.begin(20.0)
    pause.begin(21.0)  # already paused: the first instant counts
    pause.end(25.0)
    assert pause.paused_s == 7.0 and pause.pauses == 2 and pause.clock(30.0) == 23.0


def test_held_inputs_come_back_in_order():
    pause = TablePause()
    inputs = [HeldInput(HeldKind.ANSWER, 0, 1, "x"), HeldInput(HeldKind.DISCONNECT, 0),
              HeldInput(HeldKind.RECONNECT, 0), HeldInput(HeldKind.ANSWER, 1, 2, "y")]
    assert all(pause.hold(held) for held in inputs)
    assert [pause.next_held() for _ in inputs] == inputs and pause.next_held() is None


def test_a_seat_holds_a_bounded_number_of_answers():
    pause = TablePause(held_answers_per_seat=2)
    assert pause.hold(HeldInput(HeldKind.ANSWER, 0, 1, "a"))
    assert pause.hold(HeldInput(HeldKind.ANSWER, 0, 1, "b"))
    assert not pause.hold(HeldInput(HeldKind.ANSWER, 0, 1, "c"))
    assert pause.hold(HeldInput(HeldKind.ANSWER, 1, 1, "a"))  # another seat's own bound
    assert pause.hold(HeldInput(HeldKind.DISCONNECT, 0))  # drops are not answers
    pause.next_held()
    assert pause.hold(HeldInput(HeldKind.ANSWER, 0, 1, "d"))  # room again once one is applied
    assert len(pause) == 4


async def test_a_bot_that_floods_a_paused_match_is_refused_beyond_the_bound(tmp_path):
    store = SqliteStore(str(tmp_path / "arena.db"))
    stall, gate = threading.Event(), threading.Event()
    real_append = store.append_blocks

    def stalling(blocks):  # once told to, the disk hangs until the test lets it go
        if stall.is_set():
            gate.wait(60)
        return real_append(blocks)

    store.append_blocks = stalling  # type: ignore[method-assign]
    writer = StoreWriter(store, batch_events=1, max_backlog=1, flush_delay=0.01)
    bot = FakeConn("flood", auto=False)
    table = make_table(writer, [bot], decision_ms=60_000)
    run = asyncio.ensure_future(table.run())
    try:
        await writer.create_match(match("other"))
        async with asyncio.timeout(30):
            while "request" not in bot.types() or writer.backlog:
                await asyncio.sleep(0.01)
        # Another match's records fill the writer while the disk hangs.
        stall.set()
        writer.append_encoded_nowait("other", 0, 2000.0, ['{"kind":"x"}'])
        assert writer.full
        request = next(m for m in bot.seen if m["type"] == "request")
        for _ in range(HELD_ANSWERS_PER_SEAT + 5):
            table.answer(bot, request["match"], request["id"], request["legal"][0])
        assert table.paused
        refused = [m for m in bot.seen if m["type"] == "error"]
        assert [m["code"] for m in refused] == ["rate_limited"] * 5
        assert all(m["id"] == request["id"] and m["match"] == table.match_id for m in refused)
        bot.auto = True  # it answers its next requests at once
        gate.set()
        async with asyncio.timeout(60):
            assert await run is not None
        # The first held answer was applied, the others were late for it.
        late = [m for m in bot.seen if m["type"] == "error" and m["code"] == "late"]
        assert len(late) == HELD_ANSWERS_PER_SEAT - 1
        assert all(m["id"] == request["id"] for m in late)
    finally:
        gate.set()
        if not run.done():
            run.cancel()
        await writer.close()
        store.close()
