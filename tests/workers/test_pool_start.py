"""The worker pool's start: a worker that fails by itself before it is
ready fails the start (a wrong setting would only fail again), but one
killed from outside while it starts is restarted like any other."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest

from arena.server.config import ServerConfig
from arena.server.workers.live import ParentTransport
from arena.server.workers.metrics import CombinedMetrics
from arena.server.workers.pool import WorkerPool, WorkerStartError

CHILD = "tests.workers.stand_in_child"


def pool(count: int, **init: object) -> WorkerPool:
    return WorkerPool(count, ServerConfig(), node_base="pool-test", metrics=CombinedMetrics(),
                      live=ParentTransport(), on_gone=lambda node, reason: None,
                      restart_pause_s=0.05, child=CHILD, init_extra=dict(init))


async def spawned(workers: WorkerPool, index: int) -> int:
    async with asyncio.timeout(30):
        while workers.workers[index].pid is None:
            await asyncio.sleep(0.01)
    pid = workers.workers[index].pid
    assert pid is not None
    return pid


@pytest.mark.timeout(90)
async def test_a_worker_killed_while_it_starts_is_restarted_and_the_start_goes_on(tmp_path: Path):
    gate = tmp_path / "gate"
    workers = pool(2, gate=str(gate))
    starting = asyncio.create_task(workers.start(timeout_s=60))
    try:
        # The first worker, whose ready the start is waiting for, is killed
        # while it still waits at its gate.
        first = await spawned(workers, 0)
        os.kill(first, signal.SIGKILL)
        async with asyncio.timeout(30):
            while workers.workers[0].pid == first and not starting.done():
                await asyncio.sleep(0.01)
        gate.touch()
        await starting
        assert workers.alive() == [True, True]
        assert [w.restarts for w in workers.workers] == [1, 0]
    finally:
        starting.cancel()
        await workers.stop()


@pytest.mark.timeout(90)
async def test_a_worker_that_exits_by_itself_before_it_is_ready_fails_the_start(tmp_path: Path):
    workers = pool(2, gate=str(tmp_path / "gate"), exit_code=3)
    with pytest.raises(WorkerStartError, match="exited with code 3 before it was ready"):
        await workers.start(timeout_s=60)
    assert workers.stopping
