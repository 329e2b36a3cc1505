"""Runs the tournaments an organiser creates over HTTP, inside ``arena serve``.

A tournament created through the web API is stored as ``pending`` without a
schedule and with remote entrants only (the API refuses commands). The
director gives it its schedule and plays it on the running server while the
lobby keeps matching the other bots. Every tournament plays in a task of
its own: one that waits for its bots (connected nowhere, or to different
nodes) never holds up the others. A tournament that was running when the
server stopped is resumed; one the organiser cancels (on any node) is
stopped at the next poll.

Every poll the director also writes which bots are connected to this node
(arena/storage/presence.py): other nodes claim only the slots whose bots
they hold, and a tournament's page says where the bots it waits for are.
And it sends the bots connected here the deferred reveals they are owed: a
deck set played out on another node, or while the bot was away
(arena/tournament/reveals.py), and moves its movable bots to the node a
waiting slot needs them on (arena/tournament/gathering.py).

It never touches a tournament ``arena tournament`` created (its config
names its ``source`` file, or it has local entrants): that command plays
and resumes it, and ``arena serve --db`` on the same store (as the command
itself suggests, to show the results) must leave it as it is.
"""

from __future__ import annotations

import asyncio
import time

import structlog

from arena.live import TOURNAMENT_CANCELLED
from arena.server.retry import LogThrottle
from arena.storage.base import StorageError, TournamentRecord, TournamentStatus
from arena.storage.node_lock import UNNAMED
from arena.tournament.challenge import is_challenge
from arena.tournament.config import ConfigError, config_from_wire
from arena.tournament.command import new_runner
from arena.tournament.errors import TournamentError
from arena.tournament.gathering import Gatherer
from arena.tournament.host import MatchHost
from arena.tournament.reveals import RevealCourier
from arena.tournament.runner import build_schedule

log = structlog.get_logger("arena.director")


class TournamentDirector:
    """Gives pending tournaments their schedule and plays them, each in its own task."""

    def __init__(self, server: MatchHost, *, poll_s: float = 1.0,
                 claim_timeout_s: float = 600.0) -> None:
        self.server = server
        self.poll_s = poll_s
        self.claim_timeout_s = claim_timeout_s
        self.node = getattr(server.store, "node", None) or UNNAMED
        self.playing: dict[str, asyncio.Task[None]] = {}
        self._not_ours: set[str] = set()  # logged once each
        self._store_failures = LogThrottle(every_s=60.0)
        self.courier = RevealCourier(server)
        self.gatherer = Gatherer(server, self.node)

    async def run(self) -> None:
        try:
            while not self.server.stopping:
                try:
                    await self._poll()
                except StorageError as exc:  # an outage: try again next poll
                    if self._store_failures.allow(time.monotonic()) is not None:
                        log.warning("director_store_unavailable", error=str(exc))
                await asyncio.sleep(self.poll_s)
        finally:
            tasks = list(self.playing.values())
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            try:
                await self.server.writer.call(self.server.store.drop_presence, self.node)
            except StorageError:
                pass  # the rows go stale by themselves

    async def _poll(self) -> None:
        store = self.server.store
        await self.server.writer.call(store.note_presence, self.node,
                                      sorted(self.server.connected_bots()),
                                      self.server.advertised)
        records = await self.server.writer.read(store.list_tournaments)
        for tid, done in list(self.playing.items()):
            if done.done():
                del self.playing[tid]
        for record in sorted(records, key=lambda r: r.created_at):
            playing = self.playing.get(record.id)
            if record.status is TournamentStatus.CANCELLED and playing is not None:
                log.info("tournament_cancelled_here", tournament=record.id, node=self.node)
                self.server.mark_cancelled(TOURNAMENT_CANCELLED, tournament_id=record.id)
                playing.cancel()
                await asyncio.gather(playing, return_exceptions=True)
                del self.playing[record.id]
            elif (playing is None and record.status in (TournamentStatus.RUNNING,
                                                      TournamentStatus.PENDING)
                  and self._directs(record)):
                self.playing[record.id] = asyncio.create_task(self._guarded(record.id))
        await self.courier.deliver()
        await self.gatherer.gather([r for r in records if r.id in self.playing
                                    and r.status is not TournamentStatus.CANCELLED])

    async def _guarded(self, tid: str) -> None:
        """One tournament's task: whatever ends it, the others play on (a
        failure is logged; the next poll tries again if it is still open)."""
        try:
            await self._play(tid)
        except StorageError as exc:
            log.warning("tournament_paused", tournament=tid, error=str(exc))
        except Exception:  # noqa: BLE001 - one tournament's bug must not stop the rest
            log.exception("tournament_failed", tournament=tid)
            await asyncio.sleep(self.poll_s * 10)  # no tight retry loop on a bug

    def _directs(self, record: TournamentRecord) -> bool:
        """Whether this tournament was created over HTTP, for the director."""
        config = record.config
        if is_challenge(record):  # played by the challenge service, not as a tournament
            return False
        local = any(isinstance(e, dict) and e.get("command") is not None
                    for e in config.get("entrants") or [])
        if "source" not in config and not local:
            return True
        if record.id not in self._not_ours:
            self._not_ours.add(record.id)
            log.info("tournament_left_to_its_command", tournament=record.id,
                     status=record.status.value,
                     hint="'arena tournament' on its file plays or resumes it")
        return False

    async def _play(self, tid: str) -> None:
        store = self.server.store
        record = await self.server.writer.read(store.get_tournament, tid)
        try:
            config = config_from_wire(record.config)
            if any(e.local for e in config.entrants):
                raise ConfigError("entrant", "local entrants run with 'arena tournament', "
                                  "not inside the server")
            if not await self.server.writer.read(store.get_schedule, tid):
                try:
                    await self.server.writer.call(store.add_schedule, tid,
                                                  build_schedule(config, tid))
                except StorageError:
                    if not await self.server.writer.read(store.get_schedule, tid):
                        raise
                    # another node gave it its schedule at the same moment
        except (ConfigError, StorageError, ValueError) as exc:
            log.error("tournament_cancelled", tournament=tid, reason=str(exc))
            await self.server.writer.set_tournament_status(tid, TournamentStatus.CANCELLED)
            return
        log.info("tournament_directed", tournament=tid, entrants=config.entrant_names)
        try:
            # A named node shares the tournament with the other nodes on the
            # same store (arena/tournament/shared.py).
            runner = new_runner(self.server, config, record,
                                node=getattr(store, "node", None),
                                claim_timeout_s=self.claim_timeout_s)
            runner.polls_reveals = False  # this director's poll sends the reveals
        except TournamentError as exc:  # its deal key is lost: it cannot be dealt fairly
            log.error("tournament_cancelled", tournament=tid, reason=str(exc))
            await self.server.writer.set_tournament_status(tid, TournamentStatus.CANCELLED)
            return
        try:
            complete = await runner.run()
        except TimeoutError as exc:  # an entrant never connected
            log.error("tournament_cancelled", tournament=tid, reason=str(exc))
            await self.server.writer.set_tournament_status(tid, TournamentStatus.CANCELLED)
            return
        if not complete and not self.server.stopping:
            log.warning("tournament_incomplete", tournament=tid)
            await self.server.writer.set_tournament_status(tid, TournamentStatus.CANCELLED)
