"""A live-page viewer that leaves leaves nothing behind: the stream's
handler is cancelled, and with it the task that waited for the next hub
message (a task left pending is reported by asyncio as "Task was destroyed
but it is pending!" on the server's console when it is collected)."""

from __future__ import annotations

import asyncio
import gc
from typing import Any

from aiohttp.test_utils import TestClient

from arena.live import LiveHub

TIMEOUT = 10.0


async def until(condition, what: str) -> None:
    async with asyncio.timeout(TIMEOUT):
        while not condition():
            await asyncio.sleep(0.01)


def waiting_for_the_hub() -> list[asyncio.Task[Any]]:
    return [t for t in asyncio.all_tasks() if not t.done()
            and "anext" in repr(t.get_coro()).lower()]


async def test_a_viewer_that_leaves_leaves_no_pending_task(client: TestClient,
                                                           hub: LiveHub) -> None:
    reported: list[dict[str, Any]] = []
    loop = asyncio.get_running_loop()
    previous = loop.get_exception_handler()
    loop.set_exception_handler(lambda _loop, context: reported.append(context))
    try:
        for _ in range(3):
            response = await client.get("/api/live?channel=matches")
            assert response.status == 200
            await until(lambda: hub.subscriber_count == 1, "the stream subscribes")
            assert len(waiting_for_the_hub()) == 1
            response.close()  # the viewer leaves
            await until(lambda: hub.subscriber_count == 0, "the handler ends")
            await until(lambda: not waiting_for_the_hub(), "the wait for a message ends")
        gc.collect()
        await asyncio.sleep(0)
    finally:
        loop.set_exception_handler(previous)
    assert [c["message"] for c in reported] == []
