"""A node stopped while one of its slots plays: the slot's match task and
the task that watches for the lease being lost both end with it, and their
ends are read (nothing is left for the loop to complain about)."""

from __future__ import annotations

import asyncio
import gc
from typing import Any

import pytest

from arena.tournament.config import load_config

from .arenas import shared_node
from .nodes import write_tournament


@pytest.mark.timeout(60)
async def test_cancelling_play_once_mid_wait_ends_both_tasks(tmp_path, monkeypatch):
    node = await shared_node(tmp_path / "arena.db", load_config(write_tournament(tmp_path, tables=1)),
                             "node-a")
    loop = asyncio.get_running_loop()
    complaints: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: complaints.append(context))
    playing = asyncio.Event()
    play_ended = asyncio.Event()

    async def play_match(*_args: Any, **_kwargs: Any) -> None:
        playing.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            play_ended.set()
            # A table whose abort fails as it is cancelled: the error must
            # be read by someone, not left to "never retrieved".
            raise RuntimeError("abort not stored") from None

    async def no_local_bots(_names: Any) -> None:
        return None

    monkeypatch.setattr(node.server, "play_match", play_match)
    monkeypatch.setattr(node.runner, "_await_local_bots", no_local_bots)
    try:
        slot = node.store.get_schedule(node.runner.record.id)[0]
        before = asyncio.all_tasks()
        once = asyncio.create_task(node.runner._play_once(slot, asyncio.Event()))
        await asyncio.wait_for(playing.wait(), 30)
        once.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(once, 30)
        assert play_ended.is_set()
        # Neither the match's task nor the lease watcher outlives the wait.
        assert asyncio.all_tasks() - before - {once} == set()
        gc.collect()
        await asyncio.sleep(0)
        assert [c.get("message") for c in complaints] == []
    finally:
        loop.set_exception_handler(None)
        await node.server.stop()
        node.store.close()
