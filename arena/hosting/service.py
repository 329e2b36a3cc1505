"""Hosted bots on a running arena server: the socket, the runs, the ladder."""

from __future__ import annotations

import asyncio
import shutil
import time
import tempfile
from pathlib import Path
from typing import Any

import structlog

from arena.hosting.builder import recover_unfinished
from arena.hosting.cgroups import remove_stale
from arena.hosting.hosted import HostedBots
from arena.hosting.ladder import Ladder, LadderSettings
from arena.hosting.ratings import LadderRatings, full_ladder_ratings
from arena.hosting.versions import VersionStore

log = structlog.get_logger("arena.hosting")


def hosting_root(db: str) -> Path:
    """Where versions live: beside an SQLite file, else in the working directory."""
    if "://" in db:
        return Path.cwd() / "hosted"
    return Path(db).resolve().parent / "hosted"


def ladder_ratings(store: Any) -> dict[tuple[str, str], tuple[float, float]]:
    """Current ladder ratings by (game, bot), from every stored match (the
    ladder itself reads them incrementally: ``LadderRatings``)."""
    return full_ladder_ratings(store)


class HostedService:
    """Gives an :class:`~arena.server.server.ArenaServer` its hosted bots.

    ``start()`` builds what an earlier run left building and, with
    ``ladder`` settings, runs the ladder (each run opens its own Unix socket); ``stop()`` ends every
    sandbox (before the server stops, so no bot outlives it).
    """

    def __init__(self, server: Any, versions: VersionStore, *,
                 ladder: LadderSettings | None = None) -> None:
        self.server = server
        self.versions = versions
        self.ladder_settings = ladder
        self._socket_dir = Path(tempfile.mkdtemp(prefix="arena-bots-"))
        self._socket_dir.chmod(0o755)
        self.hosted = HostedBots(versions, self._socket_dir, server.start_unix,
                                 server.local_tokens)
        self.ladder: Ladder | None = None
        self._task: asyncio.Task[None] | None = None
        self._recovery: asyncio.Task[Any] | None = None

    async def start(self) -> None:
        # Sandboxes of an arena that was SIGKILLed left their cgroups behind.
        await asyncio.to_thread(remove_stale)
        # Uploads an earlier run left "building" end ready or failed.
        self._recovery = asyncio.get_running_loop().create_task(
            recover_unfinished(self.versions, before=time.time()))
        if self.ladder_settings is not None:
            store = self.server.store
            self.ladder = Ladder(self.server, self.hosted, settings=self.ladder_settings,
                                 ratings=LadderRatings(store))
            self._task = asyncio.get_running_loop().create_task(self.ladder.run())
        log.info("hosting_started", root=str(self.versions.root), ladder=self.ladder is not None)

    async def stop(self) -> None:
        for task in (self._task, self._recovery):
            if task is None:
                continue
            task.cancel()
            try:
                await task
            except (asyncio.CancelledError, Exception):
                pass
        self.hosted.close()
        await self.hosted.stop_all()
        shutil.rmtree(self._socket_dir, ignore_errors=True)
