"""How many uploads and builds the arena takes at once.

``UploadLimits`` is the policy (each figure is in the hosting guide);
``BuildQueue`` runs builds ``builds_at_once`` at a time and refuses a new
one when ``builds_waiting`` already wait, so a burst of uploads costs a queue
entry each, not a sandbox and its memory each.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Awaitable, Callable

from arena.hosting.errors import HostingError


@dataclass(frozen=True)
class UploadLimits:
    uploads_per_hour: float = 20.0  # per bot, after a burst of
    upload_burst: int = 5
    uploads_at_once: int = 2  # request bodies read at once (each up to the upload limit)
    builds_at_once: int = 1
    builds_waiting: int = 20
    versions_kept: int = 20  # per bot; older versions (not the one that plays) are removed


class QueueFull(HostingError):
    """Too many builds wait already; the upload is refused, to be sent later."""


class BuildQueue:
    def __init__(self, at_once: int, waiting: int) -> None:
        self._slots = asyncio.Semaphore(at_once)
        self.waiting_limit = waiting
        self.waiting = 0
        self.running = 0
        self.tasks: set[asyncio.Task[Any]] = set()

    def submit(self, build: Callable[[], Awaitable[Any]]) -> asyncio.Task[Any]:
        """Queue ``build()``; raises :class:`QueueFull` when the queue is full."""
        if self.waiting >= self.waiting_limit:
            raise QueueFull(f"{self.waiting} builds are waiting already; send the upload "
                            "again in a minute")
        self.waiting += 1
        task = asyncio.get_running_loop().create_task(self._run(build))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    async def _run(self, build: Callable[[], Awaitable[Any]]) -> Any:
        try:
            await self._slots.acquire()
        finally:
            self.waiting -= 1
        self.running += 1
        try:
            return await build()
        finally:
            self.running -= 1
            self._slots.release()
