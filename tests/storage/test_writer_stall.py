"""A store that stalls pauses the tables that feed it (on both backends).

The writer's bound is the tables' bound: a table finds the backlog at
``max_backlog`` before a step, holds its inputs and stops its clock until
the writer has room again. So the backlog passes the bound by at most one
step's records, and no bot is charged the time the disk took.
"""

from __future__ import annotations

import asyncio
import random
import threading
from typing import Any

from arena.games import get_game
from arena.server.seats import Seat, SeatKind
from arena.server.table import Table, TimeLimits
from arena.storage import open_store
from arena.storage.writer import StoreWriter
from tests.server.test_session_table import FakeConn

SPEC = get_game("muushig")
DECISION_MS = 1000
# How long the store stays stuck: an answer charged with it would show a
# latency of about this much; load alone (a process off the CPU for a
# second) must not look like it.
STALL_MS = 4 * DECISION_MS
BOUND = 128


def house() -> Any:
    return SPEC.house_bots[SPEC.default_house_bot](random.Random(7))


def make_table(writer: StoreWriter, conns: list[FakeConn], match_id: str) -> Table:
    seats = [Seat(index=i, name=c.bot, kind=SeatKind.REMOTE, house=house(),
                  token_hash=c.identity.token_hash, conn=c) for i, c in enumerate(conns)]
    seats += [Seat(index=i, name=f"house-{i}", kind=SeatKind.HOUSE, house=house())
              for i in range(len(conns), SPEC.n_seats)]
    return Table(match_id=match_id, spec=SPEC, engine=SPEC.new_match(None, random.Random(3), None),
                 seats=seats, limits=TimeLimits(DECISION_MS, 0, 3), writer=writer)


class Watch:
    """Every step's records as the writer takes them: the largest step and
    the largest backlog seen."""

    def __init__(self, writer: StoreWriter) -> None:
        self.largest_step = 0
        self.peak = 0
        real = writer.append_encoded_nowait

        def watched(match_id: str, first_seq: int, at: float, texts: list[str]) -> None:
            self.largest_step = max(self.largest_step, len(texts))
            real(match_id, first_seq, at, texts)
            self.peak = max(self.peak, writer._backlog)

        writer.append_encoded_nowait = watched  # type: ignore[method-assign]


async def test_a_stalled_store_pauses_its_tables_without_charging_the_bots(db_location):
    store = open_store(db_location)
    gate, stuck = threading.Event(), threading.Event()
    real_append = store.append_blocks

    def stalled(blocks):  # the disk hangs until the test lets it go
        stuck.set()
        gate.wait(60)
        return real_append(blocks)

    store.append_blocks = stalled  # type: ignore[method-assign]
    writer = StoreWriter(store, batch_events=32, max_backlog=BOUND, flush_delay=0.01)
    watch = Watch(writer)
    loop = asyncio.get_running_loop()
    try:
        tables = [make_table(writer, [FakeConn(f"a{i}"), FakeConn(f"b{i}")], f"m{i}")
                  for i in range(3)]
        runs = [asyncio.ensure_future(t.run()) for t in tables]
        async with asyncio.timeout(60):
            while writer._backlog < BOUND:  # the stall has filled the backlog
                assert not any(r.done() for r in runs), "a match ended with its log unstored"
                await asyncio.sleep(0.01)
            # The store stays stuck for several decision times of the loop's clock.
            stalled_at = loop.time()
            while loop.time() - stalled_at < STALL_MS / 1000:
                await asyncio.sleep(0.05)
        assert stuck.is_set()
        assert not any(r.done() for r in runs)
        assert watch.peak <= BOUND - 1 + watch.largest_step  # one step past the bound, at most
        gate.set()
        async with asyncio.timeout(120):
            results = await asyncio.gather(*runs)
        assert all(r is not None for r in results)
        for table in tables:
            for seat in table.seats[:2]:
                # Nobody timed out and no answer took the stall's time.
                assert seat.faults().timeouts == 0, seat.name
                assert seat.latencies_ms and max(seat.latencies_ms) < STALL_MS, seat.name
        assert watch.peak <= BOUND - 1 + watch.largest_step
        await writer.flush()
        for table in tables:
            seqs = [e.seq for e in store.get_events(table.match_id)]
            assert seqs == list(range(len(seqs))) and seqs
    finally:
        gate.set()
        await writer.close()
        store.close()
