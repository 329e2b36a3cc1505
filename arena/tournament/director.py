"""Runs the tournaments an organiser creates over HTTP, inside ``arena serve``.

A tournament created through the web API is stored as ``pending`` without a
schedule and with remote entrants only (the API refuses commands). The
director gives it its schedule and plays it on the running server, one
tournament at a time, while the lobby keeps matching the other bots. A
tournament that was running when the server stopped is resumed.

It never touches a tournament ``arena tournament`` created (its config
names its ``source`` file, or it has local entrants): that command plays
and resumes it, and ``arena serve --db`` on the same store (as the command
itself suggests, to show the results) must leave it as it is.
"""

from __future__ import annotations

import asyncio

import structlog

from arena.storage.base import StorageError, TournamentRecord, TournamentStatus
from arena.tournament.challenge import is_challenge
from arena.tournament.config import ConfigError, config_from_wire
from arena.tournament.command import new_runner
from arena.tournament.errors import TournamentError
from arena.tournament.host import MatchHost
from arena.tournament.runner import build_schedule

log = structlog.get_logger("arena.director")


class TournamentDirector:
    """Gives pending tournaments their schedule and plays them, one at a time."""

    def __init__(self, server: MatchHost, *, poll_s: float = 1.0,
                 claim_timeout_s: float = 600.0) -> None:
        self.server = server
        self.poll_s = poll_s
        self.claim_timeout_s = claim_timeout_s
        self._not_ours: set[str] = set()  # logged once each

    async def run(self) -> None:
        while not self.server.stopping:
            tid = self._next()
            if tid is None:
                await asyncio.sleep(self.poll_s)
                continue
            await self._play(tid)

    def _next(self) -> str | None:
        for status in (TournamentStatus.RUNNING, TournamentStatus.PENDING):
            for record in sorted(self.server.store.list_tournaments(),
                                 key=lambda r: r.created_at):
                if record.status is status and self._directs(record):
                    return record.id
        return None

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
        record = store.get_tournament(tid)
        try:
            config = config_from_wire(record.config)
            if any(e.local for e in config.entrants):
                raise ConfigError("entrant", "local entrants run with 'arena tournament', "
                                  "not inside the server")
            if not store.get_schedule(tid):
                try:
                    await self.server.writer.call(store.add_schedule, tid,
                                                  build_schedule(config, tid))
                except StorageError:
                    if not store.get_schedule(tid):
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
