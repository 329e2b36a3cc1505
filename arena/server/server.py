"""The arena server: bots over TCP (and a Unix socket), storage, and the tables.

The server knows nothing of HTTP or tournaments: ``arena.app`` composes it
with the web app, the tournament director and the hosted bots. Structured
concurrency: every table runs as a task of the server's task set; ``stop()``
stops accepting, lets running matches end cleanly as aborted (never
half-counted), stops the services, flushes storage, closes connections.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import random
import socket
import time
import weakref
from collections.abc import Iterable
from typing import Any

import structlog
from arena.auth import hash_token
from arena.games import game_names, get_game
from arena.games.base import GameSpec
from arena.metrics import Metrics
from arena.server.admission import ConnectionCaps, FailureWindow, Refusal
from arena.server.config import ServerConfig
from arena.server.connection import AuthError, BotConnection, HelloRefused, Identity
from arena.server.identity import IdentityError, OpenNames
from arena.server.local_tokens import LocalTokens
from arena.server.lobby import ClaimTimeoutError, Lobby
from arena.server.matches import MatchOutcome, PlayerSpec, Service, new_match_id
from arena.server.revoke import disconnect
from arena.server.seats import AutopilotReason, Seat, SeatKind
from arena.server.table import Table, TimeLimits
from arena.storage.base import Store
from arena.live import LiveHub
from arena.storage.deal_keys import LADDER_TABLE, DealKeyring
from arena.storage.node_lock import claim_node
from arena.storage.writer import StoreWriter
from protocol.deals import KeyedDeals, new_deal_key
from protocol.errors import ErrorCode
from protocol.messages import Hello

log = structlog.get_logger("arena.server")


class ArenaServer:
    """Takes bots' connections, seats them at tables and runs the tables.

    It owns the bot listeners, the admission limits, the lobby, the running
    :class:`~arena.server.table.Table` tasks and the store writer. Tournaments
    and hosted ladders drive it through :meth:`play_match` (see
    ``arena.tournament.host.MatchHost``); ``services`` run beside it with
    its lifetime. It never starts HTTP: ``arena.app.Arena`` does.
    """

    def __init__(self, config: ServerConfig, store: Store, *, hub: LiveHub | None = None,
                 metrics: Metrics | None = None, services: list[Service] | None = None) -> None:
        self.config = config
        self.store = store
        # The default game: a hello without ``game``, and ``arena match``'s.
        # Every registered game is served; each connection waits for its own.
        self.spec: GameSpec = get_game(config.game)
        self._games: dict[int, str] = {}  # connection id -> the game its hello asked for
        self.hub = hub or LiveHub()
        self.metrics = metrics or Metrics()
        self.writer = StoreWriter(store)
        self.seats_for(config.rules)  # a bad rules dict fails here, at start
        self.lobby = Lobby(seats=lambda game: self.seats_for(self._lobby_rules(game), game),
                           matchmaking=config.matchmaking, house_wait_s=config.house_wait_s,
                           start_table=self._start_lobby_table, game_of=self.game_of)
        self.tables: dict[str, Table] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._connections: set[BotConnection] = set()
        self._lingering: weakref.WeakSet[BotConnection] = weakref.WeakSet()  # closed, still reading
        self._caps = ConnectionCaps(total=config.max_connections,
                                    per_address=config.max_connections_per_address,
                                    per_token=config.max_connections_per_token)
        self._auth_failures = FailureWindow(limit=config.auth_failures_per_minute, window_s=60.0)
        self._open_names = OpenNames()
        self.local_tokens = LocalTokens(self._open_names)  # for bots we start
        self._tcp: asyncio.base_events.Server | None = None
        self._unix: list[asyncio.base_events.Server] = []
        self.services: list[Service] = list(services or [])
        self._rng = random.Random()
        self.port: int | None = None
        self.stopping = False

    def spec_of(self, game: str | None) -> GameSpec:
        """The game named ``game``; None is the server's default game."""
        return self.spec if game is None or game == self.spec.name else get_game(game)

    def seats_for(self, rules: dict | None, game: str | None = None) -> int:
        """Seats at a table of ``game`` under ``rules``; bad rules raise RuleConfigError."""
        spec = self.spec_of(game)
        return spec.new_match(rules, None, None).n_seats if rules else spec.n_seats

    def _lobby_rules(self, game: str) -> dict | None:
        """The configured rules are the default game's (others play their defaults)."""
        return self.config.rules if game == self.spec.name else None

    def game_of(self, conn: BotConnection) -> str:
        return self._games.get(conn.id, self.spec.name)

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
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.wait(self._tasks, timeout=timeout_s)
        for conn in list(self._connections):
            conn.close(bye=True)
        for conn in list(self._lingering):
            conn.abort()
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

    # -- bots we start ourselves --------------------------------------------------
    def local_token(self, name: str) -> str:
        """A token valid for this process only, for a bot the arena starts."""
        return self.local_tokens.issue(name)  # its name is reserved while it is valid

    # -- ConnectionHost -----------------------------------------------------------
    def _new_connection(self) -> BotConnection:
        cfg = self.config
        return BotConnection(self, hello_timeout_s=cfg.hello_timeout_s,
                             max_write_buffer=cfg.max_write_buffer,
                             rate_per_s=cfg.rate_limit_per_s, rate_burst=cfg.rate_limit_burst,
                             rate_strikes=cfg.rate_limit_strikes, server_name=cfg.server_name,
                             linger_s=cfg.close_linger_s, idle_timeout_s=cfg.idle_timeout_s,
                             metrics=self.metrics)

    def connection_opened(self, conn: BotConnection) -> Refusal | None:
        if self.stopping:
            return Refusal(ErrorCode.RATE_LIMITED, "the server is shutting down; connection closed",
                           retry_after_s=5)
        refusal = self._caps.admit(conn.address)
        if refusal is None:
            conn.admitted = True
            conn.counted_address = conn.address
            self._connections.add(conn)
        return refusal

    def authenticate(self, hello: Hello, conn: BotConnection) -> Identity:
        if hello.game is not None and hello.game not in game_names():
            # A value the protocol does not allow in a hello field: malformed
            # (protocol page, "Bad input"), whatever the token.
            raise HelloRefused(Refusal(
                ErrorCode.MALFORMED,
                f"hello.game {hello.game!r:.40} is not a game of this server; it plays "
                f"{', '.join(game_names())}; connection closed"))
        token_hash = hash_token(hello.token)
        local = self.local_tokens.bot_of(token_hash)
        if local is not None:
            identity = Identity(bot=local, token_hash=token_hash)
            if conn.counted_address is not None:  # our own bots: never refused by address
                self._caps.exempt(conn.counted_address)
                conn.counted_address = None
        else:
            # Checked before the store is asked, so guessing costs it nothing.
            refusal = self._auth_failures.check(conn.address)
            if refusal is not None:
                raise HelloRefused(refusal)
            try:
                identity = Identity(bot=self._bot_for(hello, token_hash), token_hash=token_hash)
            except AuthError:
                self._auth_failures.failed(conn.address)
                raise
        refusal = self._caps.claim_token(token_hash)
        if refusal is not None:
            raise HelloRefused(refusal)
        conn.counted_token = token_hash
        self._games[conn.id] = hello.game or self.spec.name
        return identity

    def _bot_for(self, hello: Hello, token_hash: str) -> str:
        """The bot a remote hello speaks for (see arena/server/identity.py)."""
        if self.config.open:
            try:
                return self._open_names.resolve(token_hash, hello.name)
            except IdentityError as exc:
                raise AuthError(str(exc)) from None
        record = self.store.find_bot_by_token_hash(token_hash)
        if record is None or record.removed or record.kind == "person":  # a person plays on the web
            raise AuthError("unknown token: register the bot (arena bots add NAME) and use its token")
        return record.name

    def connection_ready(self, conn: BotConnection) -> None:
        self.metrics.bots_connected += 1
        for table in self.tables.values():
            if table.reattach(conn):
                return
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
        self._connections.discard(conn)
        if conn.lingering:
            self._lingering.add(conn)
        if conn.admitted:
            conn.admitted = False
            self._caps.release(conn.counted_address, conn.counted_token)
        if conn.identity is not None:
            self.metrics.bots_connected -= 1
        self.lobby.remove(conn)
        self._games.pop(conn.id, None)
        if conn.seated is not None:
            conn.seated.seat_disconnected(conn)

    async def _close_idle_connections(self) -> None:
        """Close connections that said hello but that no table holds and no
        way out of the lobby may seat, once idle for ``idle_timeout_s``."""
        period = max(0.05, min(1.0, self.config.idle_timeout_s / 4))
        while True:  # the rule is the link's (BotLink.idle); this loop only asks
            await asyncio.sleep(period)
            now = time.monotonic()
            waiting = self.lobby.waiting_ids()
            for conn in list(self._connections):
                conn.check_idle(now, busy=conn.seated is not None or conn.id in waiting)

    def _release(self, conn: BotConnection) -> None:
        if not self.stopping and not conn.closed:
            if conn.matches_used_up:  # hello.max_matches: never seated for one more
                conn.leave()
            else:
                self.lobby.add(conn)

    # -- tables -----------------------------------------------------------------------
    def _house_kind(self, spec: GameSpec, kind: str | None = None) -> str:
        """``kind`` if given, else the configured house bot where this game
        has it, else the game's own default."""
        if kind is not None:
            return kind
        configured = self.config.house_bot
        return configured if configured in spec.house_bots else spec.default_house_bot

    def _house(self, kind: str | None = None, spec: GameSpec | None = None,
               rules: dict | None = None) -> Any:
        """A house bot of ``spec``'s game; factories that take the match's
        rules (``(rng, rules)``) get them, so they play by the match's flags."""
        spec = spec or self.spec
        factory = spec.house_bots[self._house_kind(spec, kind)]
        rng = random.Random(self._rng.random())
        if len(inspect.signature(factory).parameters) >= 2:
            return factory(rng, rules)
        return factory(rng)

    def _match_rules(self, spec: GameSpec, rules: dict | None) -> dict:
        """Every rule of a match of ``spec`` with these options, as the
        engine resolves them (and sends them in ``match_start.rules``)."""
        return dict(spec.new_match(rules, None, None).rules)

    def _remote_seat(self, index: int, conn: BotConnection, spec: GameSpec | None = None,
                     rules: dict | None = None) -> Seat:
        assert conn.identity is not None
        return Seat(index=index, name=conn.identity.bot, kind=SeatKind.REMOTE,
                    house=self._house(spec=spec, rules=rules),
                    token_hash=conn.identity.token_hash, conn=conn)

    def _start_lobby_table(self, conns: list[BotConnection], house: int) -> None:
        spec = self.spec_of(self.game_of(conns[0]))
        rules = self._lobby_rules(spec.name)
        resolved = self._match_rules(spec, rules)
        order: list[BotConnection | None] = [*conns, *([None] * house)]
        self._rng.shuffle(order)
        kind = self._house_kind(spec)
        seats: list[Seat] = []
        n_house = 0
        for index, conn in enumerate(order):
            if conn is None:
                n_house += 1
                seats.append(Seat(index=index, name=f"house-{kind}-{n_house}",
                                  kind=SeatKind.HOUSE, house=self._house(kind, spec, resolved)))
            else:
                seats.append(self._remote_seat(index, conn, spec, resolved))
        self._launch(self._new_table(seats, rules=rules, spec=spec))

    def _new_table(self, seats: list[Seat], *, rng: random.Random | None = None,
                   rules: dict | None = None, tournament_id: str | None = None,
                   seed: str | None = None, limits: TimeLimits | None = None,
                   deal_key: bytes | None = None,
                   slot: tuple[str, int] | None = None, spec: GameSpec | None = None) -> Table:
        """A table of ``spec``'s game (default: the server's) whose decks come
        from ``rng`` if given (``arena match --seed``), else from a keyed
        stream: the tournament's ``deal_key`` with ``seed`` naming the table,
        or a fresh key for this match alone."""
        cfg = self.config
        spec = spec or self.spec
        match_id = new_match_id()
        keyed: KeyedDeals | None = None
        if rng is None:
            if deal_key is None:
                deal_key = new_deal_key()
                DealKeyring.for_store(self.store).record_ladder_key(match_id, deal_key)
            keyed = KeyedDeals(deal_key, seed or LADDER_TABLE)
            rng = keyed
        engine = spec.new_match(rules, rng, None)
        if keyed is not None and hasattr(engine, "deal_label"):
            keyed.label_of = lambda: engine.deal_label
        table = Table(match_id=match_id, spec=spec, engine=engine, seats=seats,
                      limits=limits or TimeLimits(cfg.decision_ms, cfg.bank_ms,
                                              cfg.timeouts_before_autopilot),
                      writer=self.writer, hub=self.hub, metrics=self.metrics,
                      tournament_id=tournament_id, seed=seed, on_seat_released=self._release,
                      abandon_grace_s=cfg.abandon_grace_s, slot=slot)
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
        resolved = self._match_rules(spec, rules)
        seats: list[Seat] = []
        claimed: list[BotConnection] = []
        absent: list[str] = []
        try:
            for index, player in enumerate(players):
                if player.house is not None:
                    seats.append(Seat(index=index, name=player.name, kind=SeatKind.HOUSE,
                                      house=self._house(player.house, spec, resolved)))
                    continue
                timeout = (player.claim_timeout_s if player.claim_timeout_s is not None
                           else claim_timeout_s)
                try:
                    conn = await self.lobby.claim(player.name, timeout, spec.name)
                except ClaimTimeoutError:
                    if not player.stand_in:
                        raise
                    absent.append(player.name)
                    seats.append(Seat(index=index, name=player.name, kind=SeatKind.REMOTE,
                                      house=self._house(spec=spec, rules=resolved),
                                      token_hash=player.token_hash,
                                      autopilot=AutopilotReason.DISCONNECTED, disconnects=1))
                    log.warning("seat_played_by_autopilot", bot=player.name,
                                reason="not connected", waited_s=timeout)
                    continue
                claimed.append(conn)
                seats.append(self._remote_seat(index, conn, spec, resolved))
            rng = random.Random(seed) if seed is not None and deal_key is None else None
            table = self._new_table(seats, rng=rng, rules=rules, tournament_id=tournament_id,
                                    seed=seed, limits=limits, deal_key=deal_key, slot=slot,
                                    spec=spec)
        except BaseException:  # no table (nor a full disk's failed write) keeps a claimed bot
            for conn in claimed:
                self._release(conn)
            raise
        table.session.sealed = sealed
        task = self._launch(table)
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            task.cancel()
            await asyncio.wait([task], timeout=5)
            raise
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
        return {c.bot for c in self._connections if c.bot is not None and not c.closed}

    def send_to_bots(self, names: set[str], message: dict[str, Any]) -> int:
        """``message`` (outside any match) to every open connection of these bots."""
        conns = [c for c in self._connections if c.bot in names and not c.closed]
        for conn in conns:
            conn.send(message)
        return len(conns)

    def disconnect_bot(self, bot: str, reason: str, keep_token: str | None = None) -> int:
        return disconnect(self._connections, bot, reason, keep_token, self.local_tokens)

    def ladder_bots(self) -> list[tuple[str, str]]:
        """(bot, game) of connected bots that opted in to the hosted ladder."""
        return self.lobby.ladder_bots()

    def playing_match_ids(self) -> set[str]:
        """The matches this server's tables are playing now."""
        return set(self.tables)

    def slot_started(self, slot: tuple[str, int]) -> bool:
        """Whether the table of ``slot``, if there is one, is stored as started
        (so cancelling it gives its bots back to the lobby)."""
        table = next((t for t in self.tables.values() if t.slot == slot), None)
        return table is None or self.hub.is_live(table.match_id)

    def status(self) -> dict[str, Any]:
        return {"tables": len(self.tables), "lobby": self.lobby.idle_bots(),
                "connections": len(self._connections)}
