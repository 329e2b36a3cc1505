"""The arena server: bots over TCP, the HTTP app, storage, and the tables.

One process serves both ports. Structured concurrency: every table runs as a
task of the server's task set; ``stop()`` stops accepting, lets running
matches end cleanly as aborted (never half-counted), flushes storage and
closes connections.
"""

from __future__ import annotations

import asyncio
import random
import re
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

import structlog
from aiohttp import web

from arena.auth import hash_token
from arena.games import get_game
from arena.games.base import GameSpec
from arena.metrics import Metrics
from arena.server.config import ServerConfig
from arena.server.connection import AuthError, BotConnection, Identity
from arena.server.lobby import Lobby
from arena.server.seats import Seat, SeatKind
from arena.server.table import Limits, Table
from arena.storage.base import Store
from arena.storage.writer import StoreWriter
from arena.web.live import LiveHub
from protocol.errors import ErrorCode
from protocol.messages import Action, Hello

log = structlog.get_logger("arena.server")

_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,32}$")


def new_match_id() -> str:
    """Sortable by start time, unguessable enough to share."""
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + "-" + secrets.token_hex(3)


@dataclass(frozen=True)
class PlayerSpec:
    """Who plays a seat of a directed match: a named bot, or a house bot."""

    name: str
    house: str | None = None  # house bot kind ("heuristic", "random"), else remote


@dataclass
class MatchOutcome:
    match_id: str
    result: dict[str, Any] | None
    aborted: str | None
    players: list[str] = field(default_factory=list)


class ArenaServer:
    def __init__(self, config: ServerConfig, store: Store, *, hub: LiveHub | None = None,
                 metrics: Metrics | None = None) -> None:
        self.config = config
        self.store = store
        self.spec: GameSpec = get_game(config.game)
        self.hub = hub or LiveHub()
        self.metrics = metrics or Metrics()
        self.writer = StoreWriter(store)
        self.lobby = Lobby(seats=self.seats_for(config.rules), matchmaking=config.matchmaking,
                           house_wait_s=config.house_wait_s, start_table=self._start_lobby_table)
        self.tables: dict[str, Table] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._connections: set[BotConnection] = set()
        self._local_tokens: dict[str, str] = {}  # token hash -> name, for bots we start
        self._tcp: asyncio.base_events.Server | None = None
        self._http_runner: web.AppRunner | None = None
        self._rng = random.Random()
        self.port: int | None = None
        self.http_port: int | None = None
        self.stopping = False

    def seats_for(self, rules: dict | None) -> int:
        """Seats at a table under these rules (Muushig's `players` changes it);
        a bad rules dict raises the game's RuleConfigError here, at start."""
        return self.spec.new_match(rules, None, None).n_seats if rules else self.spec.n_seats

    # -- lifecycle ------------------------------------------------------------
    async def start(self) -> None:
        aborted = await self.writer.abort_unfinished("server restarted")
        if aborted:
            log.warning("aborted_unfinished_matches", count=len(aborted), matches=aborted)
        loop = asyncio.get_running_loop()
        cfg = self.config
        self._tcp = await loop.create_server(self._new_connection, cfg.host, cfg.port,
                                             reuse_address=True)
        self.port = self._tcp.sockets[0].getsockname()[1]
        if cfg.http_port is not None:
            from arena.web.app import make_app

            app = make_app(self.store, hub=self.hub, metrics=self.metrics,
                           admin_token=cfg.admin_token, registration=cfg.registration,
                           writer=self.writer,
                           server_info={"server": cfg.server_name, "game": self.spec.name,
                                        "bot_port": self.port, "open": cfg.open})
            self._http_runner = web.AppRunner(app, access_log=None)
            await self._http_runner.setup()
            site = web.TCPSite(self._http_runner, cfg.host, cfg.http_port)
            await site.start()
            self.http_port = self._http_runner.addresses[0][1]
        if cfg.run_tournaments:
            from arena.tournament.director import TournamentDirector

            self._launch_task(TournamentDirector(self).run())
        log.info("server_started", host=cfg.host, port=self.port, http_port=self.http_port,
                 open=cfg.open, game=self.spec.name)

    async def stop(self, timeout_s: float = 5.0) -> None:
        """Graceful shutdown: stop accepting, abort running matches, flush."""
        if self.stopping:
            return
        self.stopping = True
        log.info("server_stopping", tables=len(self.tables))
        if self._tcp is not None:
            self._tcp.close()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.wait(self._tasks, timeout=timeout_s)
        for conn in list(self._connections):
            conn.close(bye=True)
        if self._http_runner is not None:
            await self._http_runner.cleanup()
        await self.writer.close()
        self.hub.close()
        log.info("server_stopped")

    async def __aenter__(self) -> "ArenaServer":
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # -- bots we start ourselves --------------------------------------------------
    def local_token(self, name: str) -> str:
        """A token valid for this process only, for a bot the arena starts."""
        token = secrets.token_urlsafe(18)
        self._local_tokens[hash_token(token)] = name
        return token

    # -- ConnectionHost -----------------------------------------------------------
    def _new_connection(self) -> BotConnection:
        cfg = self.config
        conn = BotConnection(self, hello_timeout_s=cfg.hello_timeout_s,
                             max_write_buffer=cfg.max_write_buffer,
                             rate_per_s=cfg.rate_limit_per_s, rate_burst=cfg.rate_limit_burst,
                             rate_strikes=cfg.rate_limit_strikes, server_name=cfg.server_name)
        if len(self._connections) >= cfg.max_connections or self.stopping:
            # Refuse politely once connected; connection_made runs first.
            asyncio.get_running_loop().call_soon(conn.close)
        self._connections.add(conn)
        return conn

    def authenticate(self, hello: Hello) -> Identity:
        token_hash = hash_token(hello.token)
        local = self._local_tokens.get(token_hash)
        if local is not None:
            return Identity(bot=local, token_hash=token_hash)
        if self.config.open:
            name = hello.name or f"bot-{token_hash[:6]}"
            if not _NAME.match(name):
                raise AuthError(f"name {name!r} must be 1-32 characters of A-Z a-z 0-9 _ . -")
            return Identity(bot=name, token_hash=token_hash)
        record = self.store.find_bot_by_token_hash(token_hash)
        if record is None or record.removed:
            raise AuthError("unknown token: register the bot (arena bots add NAME) and use its token")
        return Identity(bot=record.name, token_hash=token_hash)

    def connection_ready(self, conn: BotConnection) -> None:
        self.metrics.bots_connected += 1
        for table in self.tables.values():
            if table.reattach(conn):
                return
        self.lobby.add(conn)

    def action_received(self, conn: BotConnection, action: Action) -> None:
        table = conn.seated
        if table is None or table.match_id != action.match:
            self.metrics.error(ErrorCode.UNKNOWN_REQUEST.value)
            conn.send_error(ErrorCode.UNKNOWN_REQUEST,
                            f"this connection holds no seat in match {action.match!r}", action.id)
            return
        table.answer(conn, action.match, action.id, action.action)

    def connection_closed(self, conn: BotConnection) -> None:
        self._connections.discard(conn)
        if conn.identity is not None:
            self.metrics.bots_connected -= 1
        self.lobby.remove(conn)
        if conn.seated is not None:
            conn.seated.seat_disconnected(conn)

    def _release(self, conn: BotConnection) -> None:
        if not self.stopping and not conn.closed:
            self.lobby.add(conn)

    # -- tables -----------------------------------------------------------------------
    def _house(self, kind: str | None = None) -> Any:
        kind = kind or self.config.house_bot or self.spec.default_house_bot
        return self.spec.house_bots[kind](random.Random(self._rng.random()))

    def _remote_seat(self, index: int, conn: BotConnection) -> Seat:
        assert conn.identity is not None
        return Seat(index=index, name=conn.identity.bot, kind=SeatKind.REMOTE, house=self._house(),
                    token_hash=conn.identity.token_hash, conn=conn)

    def _start_lobby_table(self, conns: list[BotConnection], house: int) -> None:
        order: list[BotConnection | None] = [*conns, *([None] * house)]
        self._rng.shuffle(order)
        kind = self.config.house_bot or self.spec.default_house_bot
        seats: list[Seat] = []
        n_house = 0
        for index, conn in enumerate(order):
            if conn is None:
                n_house += 1
                seats.append(Seat(index=index, name=f"house-{kind}-{n_house}",
                                  kind=SeatKind.HOUSE, house=self._house(kind)))
            else:
                seats.append(self._remote_seat(index, conn))
        self._launch(self._new_table(seats, rng=random.Random(), rules=self.config.rules))

    def _new_table(self, seats: list[Seat], *, rng: random.Random, rules: dict | None = None,
                   tournament_id: str | None = None, seed: str | None = None,
                   limits: Limits | None = None) -> Table:
        cfg = self.config
        engine = self.spec.new_match(rules, rng, None)
        table = Table(match_id=new_match_id(), spec=self.spec, engine=engine, seats=seats,
                      limits=limits or Limits(cfg.decision_ms, cfg.bank_ms,
                                              cfg.timeouts_before_autopilot),
                      writer=self.writer, hub=self.hub, metrics=self.metrics,
                      tournament_id=tournament_id, seed=seed, on_seat_released=self._release)
        self.tables[table.match_id] = table
        return table

    def _launch(self, table: Table) -> asyncio.Task[Any]:
        return self._launch_task(self._run_table(table))

    def _launch_task(self, coro: Any) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _run_table(self, table: Table) -> dict[str, Any] | None:
        try:
            return await table.run()
        except asyncio.CancelledError:
            raise
        except Exception:
            return None  # logged and stored as aborted by the table
        finally:
            self.tables.pop(table.match_id, None)

    async def play_match(self, players: list[PlayerSpec], *, seed: str | None = None,
                         rules: dict | None = None, tournament_id: str | None = None,
                         claim_timeout_s: float = 30.0, limits: Limits | None = None) -> MatchOutcome:
        """Run one match with the given bots in the given seats.

        Remote bots must connect (or be connected and idle) within
        ``claim_timeout_s``. The deck sequence comes from ``seed``, so the same
        seed with rotated seats is a duplicate of the same deal.
        """
        n_seats = self.seats_for(rules)
        if len(players) != n_seats:
            raise ValueError(f"{self.spec.name} needs {n_seats} players, got {len(players)}")
        seats: list[Seat] = []
        claimed: list[BotConnection] = []
        try:
            for index, player in enumerate(players):
                if player.house is not None:
                    seats.append(Seat(index=index, name=player.name, kind=SeatKind.HOUSE,
                                      house=self._house(player.house)))
                else:
                    conn = await self.lobby.claim(player.name, claim_timeout_s)
                    claimed.append(conn)
                    seats.append(self._remote_seat(index, conn))
        except BaseException:
            for conn in claimed:
                self._release(conn)
            raise
        rng = random.Random(seed) if seed is not None else random.Random()
        table = self._new_table(seats, rng=rng, rules=rules, tournament_id=tournament_id,
                                seed=seed, limits=limits)
        task = self._launch(table)
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            task.cancel()
            await asyncio.wait([task], timeout=5)
            raise
        return MatchOutcome(match_id=table.match_id, result=table.result, aborted=table.aborted,
                            players=table.players)

    def status(self) -> dict[str, Any]:
        return {"tables": len(self.tables), "lobby": self.lobby.idle_bots(),
                "connections": len(self._connections)}
