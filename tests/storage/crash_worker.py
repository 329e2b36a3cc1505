"""A process that plays storage like a busy server until it is killed.

Usage: python crash_worker.py DB_PATH

It runs several "tables" through a StoreWriter. After each match's
``finish_match`` has returned it prints ``finished <id> <n_events>`` and
flushes stdout, so the parent knows exactly which results were promised
durable; one more match stalls half-way for good (``stalled <id> <n>``).
It never stops on its own: the parent kills it with SIGKILL while matches
are mid-way and event batches are in flight.
"""

from __future__ import annotations

import asyncio
import sys
import time

from arena.storage.base import MatchRecord, MatchStatus, SeatFaults, StoredEvent
from arena.storage import open_store
from arena.storage.writer import StoreWriter

SEATS = 5


async def table(writer: StoreWriter, n: int) -> None:
    game = 0
    while True:
        match_id = f"t{n}-g{game}"
        n_events = 40 + 7 * n + game % 5
        await writer.create_match(MatchRecord(
            id=match_id, game="muushig", players=[f"bot{(n + s) % 7}" for s in range(SEATS)],
            rules={}, limits={"decision_ms": 10}, status=MatchStatus.RUNNING,
            started_at=time.time(), seed=f"{n}:{game}"))
        for seq in range(n_events):
            await writer.append_events(match_id, [StoredEvent(
                seq=seq, at=time.time(), data={"kind": "play", "seq": seq})])
            if seq % 8 == 0:
                await asyncio.sleep(0)  # let other tables interleave
        await writer.finish_match(
            match_id, result={"stars": [1, 1, 1, 1, 1], "sums": [n, game, 0, 0, 0],
                              "ranks": [1, 1, 1, 1, 1]},
            reveal=[{"round": 0, "hand": 0, "salt": "s", "deck": []}],
            faults=[SeatFaults()] * SEATS, latency_ms=[[1.0]] * SEATS,
            finished_at=time.time())
        print(f"finished {match_id} {n_events}", flush=True)
        game += 1


async def stalled_table(writer: StoreWriter) -> None:
    """A match whose bot never answers: certainly mid-way when the kill comes."""
    match_id = "stalled"
    await writer.create_match(MatchRecord(
        id=match_id, game="muushig", players=[f"bot{s}" for s in range(SEATS)], rules={},
        limits={}, status=MatchStatus.RUNNING, started_at=time.time()))
    await writer.append_events(match_id, [StoredEvent(seq=s, at=time.time(), data={"s": s})
                                          for s in range(10)])
    await writer.flush()
    print(f"stalled {match_id} 10", flush=True)
    await asyncio.Event().wait()


async def main(path: str) -> None:
    store = open_store(path)
    writer = StoreWriter(store, batch_events=32, flush_delay=0.002)
    async with asyncio.TaskGroup() as tg:
        tg.create_task(stalled_table(writer))
        for n in range(4):
            tg.create_task(table(writer, n))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
