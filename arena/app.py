"""The application composed in one place: store, live hub, bot server, web
app, tournament director and hosted bots, run side by side.

Layer: the top (with the CLI). The server below knows nothing of HTTP,
tournaments or hosting; here they are built and attached to it as
:class:`~arena.server.server.Service` s, which the server starts once its
bot port listens and stops before it flushes storage::

    async with Arena(config, store) as arena:
        arena.server.port, arena.http_port

``config.http_port`` None means no web app; ``config.run_tournaments`` runs
the director (tournaments created over HTTP); ``hosting`` (the hosted bots'
versions) gives the web its hosting pages, and ``hosted_service`` settings
start the sandboxes and their ladder.
"""

from __future__ import annotations

import asyncio
import signal
from typing import Any, Callable

import structlog
from aiohttp import web

from arena.collector import tune_for_serving
from arena.live import LiveHub
from arena.metrics import Metrics
from arena.people import PeopleSettings, PeopleTables
from arena.server.config import ServerConfig
from arena.server.revoke import TokenSweep
from arena.server.server import ArenaServer
from arena.storage.base import Store
from arena.tournament.challenge import ChallengeLimits
from arena.web.guard import GUARD, ConnectionGuard, GuardedSite, WebConnectionLimits

DEFAULT_CHALLENGES = ChallengeLimits()


class WebService:
    """The HTTP app on ``config.http_port`` (0: a free port), beside the bots'."""

    def __init__(self, hosting: Any = None, bot_port: int | None = None,
                 people: Any = None, challenges: Any = None) -> None:
        self.hosting = hosting
        self.people = people  # PeopleTables: the play pages' tables
        self.challenges = challenges  # ChallengeLimits when the arena plays challenges
        self.bot_port = bot_port  # the public bot port, when not the server's own
        # Besides the server's own: who else closes a removed bot's connections
        # (arena.app_workers adds its workers).
        self.disconnects: list[Callable[[str, str, str | None], int]] = []
        self.limits = WebConnectionLimits()
        self.guard: ConnectionGuard | None = None
        self.port: int | None = None
        self._runner: web.AppRunner | None = None

    async def start(self, server: ArenaServer) -> None:
        from arena.web.app import make_app

        cfg = server.config
        app = make_app(server.store, hub=server.hub, metrics=server.metrics,
                       admin_token=cfg.admin_token, registration=cfg.registration,
                       writer=server.writer,
                       server_info={"server": cfg.server_name, "game": server.spec.name,
                                    "bot_port": self.bot_port or server.port,
                                    "open": cfg.open},
                       hosting=self.hosting, people=self.people, challenges=self.challenges,
                       connected=server.ladder_bots,
                       disconnects=[server.disconnect_bot, *self.disconnects])
        # Counted and timed connections (arena.web.guard): a crowd on the
        # web port never takes the descriptors the bot port needs.
        self.guard = guard = ConnectionGuard(self.limits)
        app[GUARD] = guard
        self._runner = web.AppRunner(app, access_log=None,
                                     keepalive_timeout=self.limits.keepalive_timeout_s)
        await self._runner.setup()
        guard.handler_factory = self._runner.server
        assert cfg.http_port is not None, "the web server starts only with an HTTP port"
        site = GuardedSite(self._runner, cfg.host, cfg.http_port, guard=guard)
        await site.start()
        self.port = self._runner.addresses[0][1]

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None


class DirectorService:
    """Plays the tournaments organisers create over HTTP (``arena serve``)."""

    def __init__(self) -> None:
        self._task: asyncio.Task[None] | None = None

    async def start(self, server: ArenaServer) -> None:
        from arena.tournament.director import TournamentDirector

        self._task = asyncio.get_running_loop().create_task(TournamentDirector(server).run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.wait([self._task], timeout=5)
            self._task = None


def http_port_of(server: ArenaServer) -> int | None:
    """The port of the web app started with ``server``, if any."""
    for service in server.services:
        if isinstance(service, WebService):
            return service.port
    return None


class Arena:
    """One arena process: the bot server with the services its config asks for.

    ``hosted_ladder`` (a ``LadderSettings``) or ``hosted=True`` with
    ``hosting`` also starts the hosted bots (``arena.hosting.service``)
    after the server and stops them before it, so no sandbox outlives it.
    """

    def __init__(self, config: ServerConfig, store: Store, *, hosting: Any = None,
                 hosted: bool = False, hosted_ladder: Any = None,
                 hub: LiveHub | None = None, metrics: Metrics | None = None,
                 bot_port: int | None = None, people: PeopleSettings | None = None,
                 challenges: Any = DEFAULT_CHALLENGES) -> None:
        self.config = config
        self.store = store
        self.hosting = hosting
        # People play from the web: their tables exist where the web does.
        people = people or PeopleSettings(decision_ms=config.person_decision_ms,
                                          bank_ms=config.person_bank_ms)
        self.people = PeopleTables(people) if config.http_port is not None else None
        self.web = (WebService(hosting, bot_port, self.people, challenges)
                    if config.http_port is not None else None)
        services: list[Any] = [self.people, self.web] if self.web is not None else []
        # Removed bots and replaced tokens the web here did not see (another
        # node, 'arena bots remove' beside it): their connections close too.
        services.append(TokenSweep())
        if config.run_tournaments:
            services.append(DirectorService())
        self.challenges: Any = None  # plays challenges asked for over HTTP
        if challenges is not None:
            from arena.tournament.challenge_play import ChallengeService

            self.challenges = ChallengeService(challenges)
            services.append(self.challenges)
        self.server = ArenaServer(config, store, hub=hub, metrics=metrics, services=services)
        self._hosted = hosting is not None and (hosted or hosted_ladder is not None)
        self._hosted_ladder = hosted_ladder
        self._hosted_seats: Any = None  # SeatSettings; by default the ladder's
        self.hosted_service: Any = None

    def host_versions(self, db: str, seats: Any = None) -> None:
        """Before ``start()``: run hosted bots' stored versions when asked
        (a tournament's hosted entrants), without the ladder; ``seats``: the
        organiser's seat times (``arena.hosting.seats.SeatSettings``)."""
        self._hosted_seats = seats
        if self.hosting is None:
            from arena.hosting.service import build_cache
            from arena.hosting.versions import VersionStore
            from arena.web.hosting_api import Hosting

            self.hosting = Hosting(VersionStore(self.store, build_cache(db)))
        self._hosted = True

    @property
    def hosted_bots(self) -> Any:
        """The running hosted bots (``arena.hosting.hosted.HostedBots``), if any."""
        return self.hosted_service.hosted if self.hosted_service is not None else None

    @property
    def port(self) -> int | None:
        return self.server.port

    @property
    def http_port(self) -> int | None:
        return self.web.port if self.web is not None else None

    async def start(self) -> None:
        await self.server.start()
        if self._hosted:
            from arena.hosting.service import HostedService

            self.hosted_service = HostedService(self.server, self.hosting.versions,
                                                ladder=self._hosted_ladder,
                                                seats=self._hosted_seats)
            try:
                await self.hosted_service.start()
            except BaseException:
                # Its socket folder was made with it: removed with it.
                await self.hosted_service.stop()
                self.hosted_service = None
                await self.server.stop()
                raise
            if self.challenges is not None:  # hosted bots may be challenged too
                self.challenges.hosted = self.hosted_service.hosted
                if self.hosted_service.ladder is not None:
                    self.challenges.ladder_playing = self.hosted_service.ladder.playing

    async def stop(self) -> None:
        if self.hosted_service is not None:
            await self.hosted_service.stop()
        await self.server.stop()

    async def __aenter__(self) -> "Arena":
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()


async def serve(config: ServerConfig, *, hosted: bool = False, ladder_interval: float = 2.0,
                ladder_tables: int = 2, workers: int = 1, log_level: str = "info",
                seats: Any = None) -> int:
    """``arena serve``: run the arena on ``config.db`` until SIGTERM or SIGINT.

    ``workers`` above 1: the bots are played by that many worker processes
    (``arena.app_workers``); this process serves the web, the director and
    the hosted bots."""
    from arena.descriptors import quiet_accept_errors, raise_open_files_limit
    from arena.storage import open_store

    before, after = raise_open_files_limit()  # before any connection: see arena.descriptors
    if after != before:
        structlog.get_logger("arena.server").info("open_files_limit_raised", before=before,
                                                  now=after)
    quiet_accept_errors(asyncio.get_running_loop())
    store = open_store(config.db)
    hosting = ladder = None
    if hosted:
        from arena.hosting.ladder import LadderSettings
        from arena.hosting.service import build_cache
        from arena.hosting.versions import VersionStore
        from arena.web.hosting_api import Hosting

        hosting = Hosting(VersionStore(store, build_cache(config.db)))
        from arena.hosting.seats import SeatSettings

        ladder = LadderSettings(interval_s=ladder_interval, max_tables=ladder_tables,
                                seats=seats or SeatSettings())
    from arena.tournament.command import start_bridge  # live events of the other nodes

    hub, bridge = await start_bridge(config.db, store.node)
    arena: Any
    if workers > 1:
        from arena.app_workers import WorkersArena

        def parents_arena(own: ServerConfig, own_hub: LiveHub, metrics: Metrics,
                          bot_port: int) -> Arena:
            return Arena(own, store, hosting=hosting, hosted_ladder=ladder, hub=own_hub,
                         metrics=metrics, bot_port=bot_port)

        arena = WorkersArena(config, store, workers, parents_arena, node_hub=hub,
                             hosted_ladder=ladder is not None, log_level=log_level)
    else:
        arena = Arena(config, store, hosting=hosting, hosted_ladder=ladder, hub=hub)
    tune_for_serving()  # the modules are imported; no table is playing yet
    await arena.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    print(f"arena: bots connect to {config.host}:{arena.port}"
          + (f", web on http://{config.host}:{arena.http_port}/" if arena.http_port else "")
          + (f", {workers} workers" if workers > 1 else ""),
          flush=True)
    await stop.wait()
    await arena.stop()
    if bridge is not None:
        await bridge.stop()
    store.close()
    return 0
