"""The arena server: bots over TCP (and a Unix socket), storage, and the tables.

The server knows nothing of HTTP or tournaments: ``arena.app`` composes it
with the web app, the tournament director and the hosted bots. It is a
facade over parts that each have one job:

* :class:`~arena.server.gate.BotGate` -- which connections are let in, as
  which bot, for which game;
* :class:`~arena.server.lobby.Lobby` -- bots without a seat, and how they get one;
* :class:`~arena.server.seating.Seating` -- the seats of a new table, house
  bots included;
* :class:`~arena.server.tables.TableRunner` -- the running tables.

The server owns the listeners and the lifetime of all of them, and routes
what a connection says to the part it is for. Structured concurrency:
every table runs as a task of the runner; ``stop()`` stops accepting, lets
running matches end cleanly as aborted (never half-counted), stops the
services, flushes storage, closes connections.
"""

from __future__ import annotations

import asyncio
import os
import random
import socket
import time
from collections.abc import Iterable
from typing import Any

import structlog
from arena.games.base import GameSpec
from arena.metrics import Metrics
from arena.server.admission import Refusal
from arena.server.config import ServerConfig
from arena.server.connection import BotConnection, Identity
from arena.server.gate import BotGate
from arena.server.lobby import Lobby
from arena.server.matches import MatchOutcome, PlayerSpec, Service
from arena.server.seating import Seating
from arena.server.table import Table, TimeLimits
from arena.server.tables import TableRunner
from arena.storage.base import Store
from arena.live import LiveHub
from arena.storage.node_lock import claim_node
from arena.storage.writer import StoreWriter
from protocol.errors import ErrorCode
from protocol.messages import Hello

log = structlog.get_logger("arena.server")


class ArenaServer:
    """Takes bots' connections, seats them at tables and runs the tables.

    It composes the gate (:attr:`gate`), the lobby (:attr:`lobby`), the
    seating (:attr:`seating`), the table runner (:attr:`runner`) and the
    store writer, and owns the bot listeners. Tournaments and hosted
    ladders drive it through :meth:`play_match` (see
    ``arena.tournament.host.MatchHost``); ``services`` run beside it with
    its lifetime. It never starts HTTP: ``arena.app.Arena`` does.
    """

    def __init__(self, config: ServerConfig, store: Store, *, hub: LiveHub | None = None,
                 metrics: Metrics | None = None, services: list[Service] | None = None) -> None:
        self.config = config
        self.store = store
        self.seating = Seating(config)  # a bad rules dict fails here, at start
        self.spec: GameSpec = self.seating.spec
        self.hub = hub or LiveHub()
        self.metrics = metrics or Metrics()
        self.writer = StoreWriter(store)
        self.gate = BotGate(config, store, default_game=self.spec.name, metrics=self.metrics,
                            writer=self.writer)
        self.local_tokens = self.gate.local_tokens  # for bots we start
        self.lobby = Lobby(seats=lambda game: self.seats_for(self.seating.lobby_rules(game), game),
                           matchmaking=config.matchmaking, house_wait_s=config.house_wait_s,
                           start_table=self._start_lobby_table, game_of=self.gate.game_of)
        self.runner = TableRunner(config, store, writer=self.writer, hub=self.hub,
                                  metrics=self.metrics, on_seat_released=self._release)
        self._tasks: set[asyncio.Task[Any]] = set()  # the server's own loops
        self._tcp: asyncio.base_events.Server | None = None
        self._unix: list[asyncio.base_events.Server] = []
        self.services: list[Service] = list(services or [])
        self.port: int | None = None
        self.stopping = False

    @property
    def tables(self) -> dict[str, Table]:
        """The tables playing now, by match id."""
        return self.runner.tables

    def spec_of(self, game: str | None) -> GameSpec:
        """The game named ``game``; None is the server's default game."""
        return self.seating.spec_of(game)

    def seats_for(self, rules: dict | None, game: str | None = None) -> int:
        """Seats at a table of ``game`` under ``rules``; bad rules raise RuleConfigError."""
        return self.seating.seats_for(rules, game)

    def game_of(self, conn: BotConnection) -> str:
        return self.gate.game_of(conn)

    # -- lifecycle ------------------------------------------------------------
    async def start(self) -> None:
        # Hold the node name (refused if taken); close what its last run left.
        await self.writer.call(claim_node, self.store, "server restarted")
        loop = asyncio.get_running_loop()
        cfg = self.config
        if cfg.listen:
            self._tcp = await loop.create_server(self._new_connection, cfg.host, cfg.port,
                                                 reuse_address=True, backlog=cfg.listen_backlog)
            self.port = self._tcp.sockets[0].getsockname()[1]
        self._launch_task(self._close_idle_connections())
        self._launch_task(self.metrics.sample_every_second())  # the rate's buckets
        for service in self.services:
            await service.start(self)
        log.info("server_started", host=cfg.host, port=self.port, open=cfg.open,
                 game=self.spec.name)

    async def start_unix(self, path: str | os.PathLike[str], wrap: Any = None) -> Any:
        """Also take bots on a Unix socket (hosted bots' only way out of their
        sandboxes). ``wrap(conn)`` gives each connection its protocol: such a
        socket is its caller's to close (a hosted run's own, limits per bot)."""
        server = await asyncio.get_running_loop().create_unix_server(
            lambda: wrap(self._new_connection()) if wrap else self._new_connection(), str(path))
        os.chmod(path, 0o666)  # sandboxed bots run under user ids of their own
        self._unix += [] if wrap else [server]
        return server

    async def adopt_connection(self, sock: socket.socket, data: bytes = b"") -> None:
        """Take a bot connection another listener accepted (``arena serve
        --workers``: the parent reads the hello and hands the socket over),
        with the bytes already read from it, as if they came now."""
        _, conn = await asyncio.get_running_loop().connect_accepted_socket(
            self._new_connection, sock)
        if data:
            conn.data_received(data)

    async def stop(self, timeout_s: float = 5.0) -> None:
        """Graceful shutdown: stop accepting, abort running matches, flush."""
        if self.stopping:
            return
        self.stopping = True
        log.info("server_stopping", tables=len(self.tables))
        if self._tcp is not None:
            self._tcp.close()
        for unix in self._unix:
            unix.close()
        tasks = self.runner.cancel() | self._tasks
        for task in list(self._tasks):
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=timeout_s)
        self.gate.close_all()
        for service in reversed(self.services):
            await service.stop()
        await self.writer.close()
        self.hub.close()
        log.info("server_stopped")

    async def __aenter__(self) -> "ArenaServer":
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    def _launch_task(self, coro: Any) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # -- bots we start ourselves --------------------------------------------------
    def local_token(self, name: str) -> str:
        """A token valid for this process only, for a bot the arena starts."""
        return self.local_tokens.issue(name)  # its name is reserved while it is valid

    # -- ConnectionHost: what a connection says, routed to the part it is for --------
    def _new_connection(self) -> BotConnection:
        cfg = self.config
        return BotConnection(self, hello_timeout_s=cfg.hello_timeout_s,
                             max_write_buffer=cfg.max_write_buffer,
                             rate_per_s=cfg.rate_limit_per_s, rate_burst=cfg.rate_limit_burst,
                             rate_strikes=cfg.rate_limit_strikes, server_name=cfg.server_name,
                             linger_s=cfg.close_linger_s, idle_timeout_s=cfg.idle_timeout_s,
                             metrics=self.metrics)

    def connection_opened(self, conn: BotConnection) -> Refusal | None:
        return self.gate.admit(conn, stopping=self.stopping)

    def authenticate(self, hello: Hello, conn: BotConnection) -> Identity:
        return self.gate.authenticate(hello, conn)

    def connection_ready(self, conn: BotConnection) -> None:
        self.metrics.bots_connected += 1
        if not self.runner.reattach(conn):
            self.lobby.add(conn)

    def action_received(self, conn: BotConnection, match: str, request_id: int, action: Any) -> None:
        table = conn.seated
        if table is None or table.match_id != match:
            self.metrics.error(ErrorCode.UNKNOWN_REQUEST.value)
            conn.send_error(ErrorCode.UNKNOWN_REQUEST,
                            f"this connection holds no seat in match {match!r}", request_id,
                            match=match)
            return
        table.answer(conn, match, request_id, action)

    def connection_alive(self, conn: BotConnection) -> None:
        self.lobby.alive(conn)

    def connection_closed(self, conn: BotConnection) -> None:
        self.gate.closed(conn)
        self.lobby.remove(conn)
        if conn.seated is not None:
            conn.seated.seat_disconnected(conn)

    async def _close_idle_connections(self) -> None:
        """Close connections that said hello but that no table holds and no
        way out of the lobby may seat, once idle for ``idle_timeout_s``."""
        period = max(0.05, min(1.0, self.config.idle_timeout_s / 4))
        while True:  # the rule is the link's (BotLink.idle); this loop only asks
            await asyncio.sleep(period)
            self.gate.close_idle(time.monotonic(), self.lobby.waiting_ids())

    def _release(self, conn: BotConnection) -> None:
        """A bot's seat is free (its table ended, or was never built)."""
        if not self.stopping and not conn.closed:
            if conn.matches_used_up:  # hello.max_matches: never seated for one more
                conn.leave()
            else:
                self.lobby.add(conn)

    # -- tables -----------------------------------------------------------------------
    def _start_lobby_table(self, conns: list[BotConnection], house: int) -> None:
        """Matchmaking found a table's worth: seat and run it (raises if the
        table cannot be built; the lobby then tries again after a backoff)."""
        spec = self.spec_of(self.game_of(conns[0]))
        seats = self.seating.lobby_seats(conns, house, spec)
        self.runner.launch(self.runner.new_table(
            seats, rules=self.seating.lobby_rules(spec.name), spec=spec))

    async def play_match(self, players: list[PlayerSpec], *, seed: str | None = None,
                         rules: dict | None = None, tournament_id: str | None = None,
                         claim_timeout_s: float = 30.0, limits: TimeLimits | None = None,
                         deal_key: bytes | None = None,
                         slot: tuple[str, int] | None = None,
                         game: str | None = None, sealed: bool = False) -> MatchOutcome:
        """Run one match with these bots in these seats (remote ones claimed within
        ``claim_timeout_s``). With ``deal_key`` (a tournament's secret) every deck
        comes from the key, ``seed`` (the table's label) and the deal's label:
        rotated seats at a table get the same deals; without it ``seed`` alone
        fixes the decks, and no seed means a fresh key. ``slot`` is completed in
        the finishing transaction. ``game``: default the server's. ``sealed``:
        later matches deal these decks again (``MatchSession.sealed``)."""
        spec = self.spec_of(game)
        n_seats = self.seats_for(rules, spec.name)
        if len(players) != n_seats:
            raise ValueError(f"{spec.name} needs {n_seats} players, got {len(players)}")
        claimed: list[BotConnection] = []
        try:
            seats, absent = await self.seating.claim_seats(self.lobby, players, spec, rules,
                                                           claim_timeout_s, claimed)
            rng = random.Random(seed) if seed is not None and deal_key is None else None
            table = self.runner.new_table(seats, rng=rng, rules=rules,
                                          tournament_id=tournament_id, seed=seed, limits=limits,
                                          deal_key=deal_key, slot=slot, spec=spec)
        except BaseException:  # no table (nor a full disk's failed write) keeps a claimed bot
            for conn in claimed:
                self._release(conn)
            raise
        table.session.sealed = sealed
        await self.runner.play(table)
        return MatchOutcome(match_id=table.match_id, result=table.result, aborted=table.aborted,
                            players=table.players, absent=absent)

    # -- for tournaments (arena.tournament.host.MatchHost) ------------------------
    def reserve_names(self, names: Iterable[str]) -> None:
        self.lobby.reserve(names)

    def release_names(self, names: Iterable[str]) -> None:
        self.lobby.release(names)

    def idle_bots(self) -> list[str]:
        return self.lobby.idle_bots()

    def connected_bots(self) -> set[str]:
        """Names of the bots connected here: in the lobby or at a table."""
        return self.gate.connected_bots()

    def send_to_bots(self, names: set[str], message: dict[str, Any]) -> int:
        """``message`` (outside any match) to every open connection of these bots."""
        return self.gate.send_to_bots(names, message)

    @property
    def advertised(self) -> str | None:
        """host:port where bots reach this node (None: not known)."""
        if self.config.advertise:
            return self.config.advertise
        if self.config.host in ("", "0.0.0.0", "::") or self.port is None:
            return None
        return f"{self.config.host}:{self.port}"

    def move_bots(self, names: set[str], message: dict[str, Any]) -> list[str]:
        """Send ``move`` to the idle connections of these bots whose hello
        said ``movable``, and close them; returns the bots moved."""
        moving = [c for c in self.lobby.idle_connections()
                  if c.bot in names and c.movable and not c.closed]
        for conn in moving:
            conn.move(message)
        return sorted({c.bot for c in moving if c.bot is not None})

    def disconnect_bot(self, bot: str, reason: str, keep_token: str | None = None) -> int:
        return self.gate.disconnect_bot(bot, reason, keep_token)

    def ladder_bots(self) -> list[tuple[str, str]]:
        """(bot, game) of connected bots that opted in to the hosted ladder."""
        return self.lobby.ladder_bots()

    def playing_match_ids(self) -> set[str]:
        """The matches this server's tables are playing now."""
        return set(self.tables)

    def slot_started(self, slot: tuple[str, int]) -> bool:
        """Whether the table of ``slot``, if there is one, is stored as started
        (so cancelling it gives its bots back to the lobby)."""
        return self.runner.slot_started(slot)

    def mark_cancelled(self, reason: str, *, tournament_id: str | None = None,
                       slot: tuple[str, int] | None = None) -> None:
        """Why the cancel about to reach these tables (all, or those of
        ``tournament_id`` or ``slot``) ends their matches."""
        self.runner.mark_cancelled(reason, tournament_id=tournament_id, slot=slot)

    def status(self) -> dict[str, Any]:
        return {"tables": len(self.tables), "lobby": self.lobby.idle_bots(),
                "connections": len(self.gate.connections)}
