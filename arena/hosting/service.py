"""Hosted bots on a running arena server: the socket, the runs, the ladder."""

from __future__ import annotations

import asyncio
import hashlib
import os
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
from arena.hosting.seats import SeatSettings
from arena.hosting.legacy import import_legacy
from arena.hosting.ratings import LadderRatings, full_ladder_ratings
from arena.hosting.versions import VersionStore

log = structlog.get_logger("arena.hosting")


CACHE_ENV = "ARENA_BUILD_CACHE"
# How often a server with hosted bots looks for versions nobody is building
# (a node that died mid-build; a version stored with --no-build).
RECOVER_EVERY_S = 30.0
ORPHAN_AFTER_S = 600.0  # a version building for this long without a live claim


def build_cache(db: str) -> Path:
    """This node's folder of built versions (a cache: the store holds the
    versions). ``ARENA_BUILD_CACHE`` if set; else ``hosted/`` beside a
    SQLite file; else, for a database server or an in-memory store, a
    folder per database under the user's cache folder (never the working
    folder: a shell that submits leaves nothing where it stands)."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    if "://" not in db and db != ":memory:":
        return Path(db).resolve().parent / "hosted"
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    where = hashlib.sha256(_without_password(db).encode()).hexdigest()[:16]
    return base / "arena" / "hosted" / where


def _without_password(db: str) -> str:
    """The store's location without a password (names the cache folder:
    one folder per database, whoever connects to it)."""
    scheme, sep, rest = db.partition("://")
    if not sep or "@" not in rest.split("/", 1)[0]:
        return db
    auth, _, host = rest.partition("@")
    return f"{scheme}://{auth.split(':', 1)[0]}@{host}"


def ladder_ratings(store: Any) -> dict[tuple[str, str], tuple[float, float]]:
    """Current ladder ratings by (game, bot), from every stored match (the
    ladder itself reads them incrementally: ``LadderRatings``)."""
    return full_ladder_ratings(store)


class HostedService:
    """Gives an :class:`~arena.server.server.ArenaServer` its hosted bots.

    ``start()`` builds what an earlier run (or a node that died) left
    building, now and then again every ``RECOVER_EVERY_S``, and, with
    ``ladder`` settings, runs the ladder (each run opens its own Unix socket); ``stop()`` ends every
    sandbox (before the server stops, so no bot outlives it). ``seats``: the
    seat times (by default the ladder's).
    """

    def __init__(self, server: Any, versions: VersionStore, *,
                 ladder: LadderSettings | None = None, seats: SeatSettings | None = None) -> None:
        self.server = server
        self.versions = versions
        self.ladder_settings = ladder
        self._socket_dir = Path(tempfile.mkdtemp(prefix="arena-bots-"))
        self._socket_dir.chmod(0o755)
        # One set of seat times for the ladder's tables and tournament entrants.
        seats = seats or (ladder.seats if ladder is not None else SeatSettings())
        self.hosted = HostedBots(versions, self._socket_dir, server.start_unix,
                                 server.local_tokens, seats=seats)
        self.ladder: Ladder | None = None
        self._task: asyncio.Task[None] | None = None
        self._recovery: asyncio.Task[Any] | None = None

    async def start(self) -> None:
        # Sandboxes of an arena that was SIGKILLed left their cgroups behind.
        await asyncio.to_thread(remove_stale)
        # Versions an older arena kept as files join the store (once).
        await asyncio.to_thread(import_legacy, self.versions)
        # Uploads an earlier run left "building" end ready or failed.
        self._recovery = asyncio.get_running_loop().create_task(self._recover(time.time()))
        if self.ladder_settings is not None:
            store = self.server.store
            self.ladder = Ladder(self.server, self.hosted, settings=self.ladder_settings,
                                 ratings=LadderRatings(store))
            self._task = asyncio.get_running_loop().create_task(self.ladder.run())
        log.info("hosting_started", root=str(self.versions.root), ladder=self.ladder is not None)

    async def _recover(self, started: float) -> None:
        """Builds nobody finished, now and every ``RECOVER_EVERY_S``: those an
        earlier run left, those stored without a build, and those a node of
        the store stopped building (its claim ran out)."""
        before: float | None = started
        while True:
            try:
                await recover_unfinished(self.versions, before=before)
                # Versions pruned on another node leave this node's cache.
                await asyncio.to_thread(self.versions.sweep_cache)
            except Exception as exc:  # noqa: BLE001 - the store is away: next round
                log.warning("hosting_recovery_failed", error=str(exc))
            await asyncio.sleep(RECOVER_EVERY_S)
            # Later rounds take what waited long: an upload to this node or
            # another waits in its own build queue first.
            before = time.time() - ORPHAN_AFTER_S

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
