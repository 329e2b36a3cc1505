"""Hosted versions as tournament entrants: a run of the stored version per match.

A tournament file names a hosted bot's version as an entrant
(``{name = "mybot", hosted = true, version = 7}``); it sits as
``mybot.v7``, so v6 and v7 of one bot can be two entrants of one
tournament (a gauntlet's "is v7 better than v6 and the field?").

Before each of its matches the runner starts that version in its sandbox
through the hosting layer (the arena's ``HostedBots.start_version``, handed
in from the application: this layer starts no sandbox itself) and waits
until it is in the lobby; the seat is claimed with the run's token only,
so no other connection may take it; after the match the run is stopped and
its stderr is kept with the version, like a ladder match's. A version that
cannot start (removed, not ready) is played by autopilot for that match,
as an absent entrant is, and the reason is logged.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any, Protocol

import structlog

from arena.auth import hash_token
from arena.tournament.config import Entrant, TournamentConfig
from arena.tournament.errors import TournamentError

log = structlog.get_logger("arena.tournament")


class HostedStarter(Protocol):
    """What a tournament needs of the hosted bots (arena.hosting.hosted.HostedBots)."""

    async def start_version(self, bot: str, version_number: int, seat: str) -> Any:
        """Start that version under the name ``seat``; the run has a ``token``."""

    async def stop(self, bot: str, match_id: str | None = None) -> None:
        """Stop the run of ``bot`` (here: a seat name), keeping its stderr."""


class HostedEntrantsError(TournamentError):
    """A tournament with hosted entrants where no hosted bots can run."""


class HostedEntrants:
    """The hosted entrants of one tournament and their running matches."""

    def __init__(self, config: TournamentConfig, starter: HostedStarter | None, *,
                 idle_bots: Any, wait_s: float) -> None:
        self.entrants: dict[str, Entrant] = {e.name: e for e in config.entrants if e.hosted}
        if self.entrants and starter is None:
            raise HostedEntrantsError(
                f"hosted entrant(s) {', '.join(sorted(self.entrants))} need an arena with the "
                "hosted bots' versions: run the tournament with 'arena tournament' on the "
                "store that keeps them (needs bubblewrap)")
        self.starter = starter
        self.idle_bots = idle_bots  # () -> names waiting in the lobby (the host's)
        self.wait_s = wait_s  # how long a started run may take to say hello
        self.tokens: dict[str, str] = {}  # seat -> token hash of its run, while it plays

    def token_hash(self, seat: str) -> str | None:
        return self.tokens.get(seat)

    async def seat(self, names: Iterable[str]) -> list[str]:
        """Start the runs of the hosted entrants among ``names`` and wait
        until they are in the lobby (or ``wait_s`` passed); the seats started."""
        started = []
        for seat in names:
            entrant = self.entrants.get(seat)
            if entrant is None or self.starter is None:
                continue
            assert entrant.bot is not None and entrant.version is not None
            try:
                run = await self.starter.start_version(entrant.bot, entrant.version, seat)
            except Exception as exc:  # removed, not ready, a sandbox that fails
                log.warning("hosted_entrant_not_started", bot=seat,
                            error=f"{type(exc).__name__}: {exc}")
                continue
            self.tokens[seat] = hash_token(run.token)
            started.append(seat)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.wait_s
        waiting = set(started)
        while waiting and loop.time() < deadline:
            waiting -= set(self.idle_bots())
            if waiting:
                await asyncio.sleep(0.05)
        return started

    async def leave(self, seats: Iterable[str], match_id: str | None) -> None:
        """Stop the runs after their match (its stderr goes with ``match_id``)."""
        for seat in seats:
            self.tokens.pop(seat, None)
            if self.starter is None:
                continue
            try:
                await self.starter.stop(seat, match_id)
            except Exception as exc:  # a store that fails keeping the log
                log.warning("hosted_entrant_not_stopped", bot=seat,
                            error=f"{type(exc).__name__}: {exc}")
