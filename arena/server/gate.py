"""The bot port's gate: which connections are let in, as which bot, for
which game, and which are open now.

:class:`BotGate` applies the limits of ``arena.server.admission`` (pure
counting) to real connections: it counts a connection in at connect and
out at close, checks a hello's token (the arena's own local tokens, the
open server's names, or the store's registered bots), remembers the game
each hello asked for, and closes connections that wait for nothing. It
never seats a bot: the lobby and the tables do (``arena.server.server``
routes between them).
"""

from __future__ import annotations

import asyncio
import time
import weakref
from typing import Any, Callable

import structlog

from arena.auth import hash_token
from arena.games import game_names
from arena.metrics import Metrics
from arena.server.admission import ConnectionCaps, FailureWindow, Refusal
from arena.server.config import ServerConfig
from arena.server.connection import AuthError, BotConnection, HelloRefused, Identity
from arena.server.identity import (IdentityError, OpenNames, name_taken, started_name,
                                   stored_name_problem)
from arena.server.local_tokens import LocalTokens
from arena.server.retry import LogThrottle
from arena.server.revoke import disconnect
from arena.storage.base import PERSON_KIND, BotRecord, Store, StorageError
from arena.storage.open_names import STARTED_BY_ARENA
from arena.storage.writer import StoreWriter
from protocol.errors import ErrorCode
from protocol.messages import Hello

log = structlog.get_logger("arena.gate")


_STORE_DOWN = Refusal(ErrorCode.RATE_LIMITED,
                      "the server cannot record a new bot name now (its store takes no "
                      "writes); try again shortly; connection closed", retry_after_s=5)


class BotGate:
    """The admitted connections of one server and the rules that let them in."""

    def __init__(self, config: ServerConfig, store: Store, *, default_game: str,
                 metrics: Metrics, writer: StoreWriter | None = None) -> None:
        self.config = config
        self.store = store
        self.writer = writer  # an open server's new names are stored through it
        self._storing: set[asyncio.Task[None]] = set()
        self._store_down_log = LogThrottle(every_s=60.0)
        self.default_game = default_game  # a hello without ``game`` plays this
        self.metrics = metrics
        self.connections: set[BotConnection] = set()
        self._lingering: weakref.WeakSet[BotConnection] = weakref.WeakSet()  # closed, still reading
        self._games: dict[int, str] = {}  # connection id -> the game its hello asked for
        self.caps = ConnectionCaps(total=config.max_connections,
                                   per_address=config.max_connections_per_address,
                                   per_token=config.max_connections_per_token)
        self._auth_failures = FailureWindow(limit=config.auth_failures_per_minute, window_s=60.0)
        self._open_names = OpenNames()
        # For bots the arena starts; in open mode their names are held in the
        # store too, where the other processes of the server look.
        self.local_tokens = LocalTokens(self._open_names, on_issue=self._hold_started_name)

    # -- in ------------------------------------------------------------------------
    def admit(self, conn: BotConnection, *, stopping: bool) -> Refusal | None:
        """A new connection: counted in, or the refusal it is closed with."""
        if stopping:
            return Refusal(ErrorCode.RATE_LIMITED, "the server is shutting down; connection closed",
                           retry_after_s=5)
        refusal = self.caps.admit(conn.address)
        if refusal is None:
            conn.admitted = True
            conn.counted_address = conn.address
            self.connections.add(conn)
        return refusal

    def authenticate(self, hello: Hello, conn: BotConnection) -> Identity:
        """The bot a hello speaks for; raises AuthError or HelloRefused."""
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
                self.caps.exempt(conn.counted_address)
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
        refusal = self.caps.claim_token(token_hash)
        if refusal is not None:
            raise HelloRefused(refusal)
        conn.counted_token = token_hash
        self._games[conn.id] = hello.game or self.default_game
        return identity

    def _bot_for(self, hello: Hello, token_hash: str) -> str:
        """The bot a remote hello speaks for (see arena/server/identity.py)."""
        if self.config.open:
            try:
                return self._open_names.resolve(
                    token_hash, hello.name, lambda name: self._claim_name(name, token_hash))
            except IdentityError as exc:
                raise AuthError(str(exc)) from None
        record = self.store.find_bot_by_token_hash(token_hash)
        if record is None or record.removed or record.kind == PERSON_KIND:  # a person plays on the web
            raise AuthError("unknown token: register the bot (arena bots add NAME) and use its token")
        return record.name

    def _claim_name(self, name: str, token_hash: str) -> None:
        """An open server's new name is checked against the store, where
        people's and registered bots' names are (raises IdentityError), then
        taken there. The check is a read, as a registered hello's is; the
        write goes to the store writer's thread, off the loop that times the
        matches, and the store's primary key decides a race with a person
        registering the same name meanwhile (:meth:`_stored`)."""
        epoch = self.config.open_epoch
        try:
            record = self.store.get_bot(name)
            # Another process of this server (a worker, the parent) may
            # have given the name to another token.
            holder = self.store.open_name_owner(name, epoch)
        except StorageError:
            raise HelloRefused(_STORE_DOWN) from None
        if record is not None:
            problem = stored_name_problem(record, token_hash)
            if problem is not None:
                raise IdentityError(problem)
            if record.token_hash == token_hash:
                # The token registered for the name owns it in the bots
                # table, which every process reads: no open claim is needed,
                # and the arena's hold on the name of a bot it also hosts
                # keeps impostors out, not the bot's owner.
                return
        if holder is not None and holder != token_hash:
            raise IdentityError(_taken(name, holder))
        if self.writer is None:  # no writer thread (the gate alone, in tests)
            if record is None:
                self._stored(name, token_hash, self.store.ensure_bot(name))
            holder = self.store.claim_open_name(name, token_hash, epoch)
            if holder != token_hash:
                raise IdentityError(_taken(name, holder))
            return
        task = asyncio.get_running_loop().create_task(
            self._store_name(name, token_hash, new=record is None))
        self._storing.add(task)
        task.add_done_callback(self._storing.discard)

    async def _store_name(self, name: str, token_hash: str, *, new: bool) -> None:
        assert self.writer is not None
        try:
            record = await self.writer.ensure_bot(name) if new else None
            holder = await self.writer.claim_open_name(name, token_hash, self.config.open_epoch)
        except StorageError as exc:
            # Unrecorded, the name could be a person's later: the bot comes
            # back when the store takes writes again.
            held_back = self._store_down_log.allow(time.monotonic())
            if held_back is not None:  # a full disk: a line a minute, not one per hello
                log.warning("open_name_not_stored", bot=name, error=str(exc),
                            more_since_last=held_back)
            self._let_go(name, token_hash, lambda conn: conn.refuse(_STORE_DOWN))
            return
        if holder != token_hash:
            # Another process of this server claimed it first (a race of
            # two hellos): the one claim the store took decides.
            problem = _taken(name, holder)
            self._let_go(name, token_hash, lambda conn: conn.fail(
                ErrorCode.AUTH_FAILED, f"{problem}; connection closed"))
            return
        if record is not None:
            self._stored(name, token_hash, record)

    def _hold_started_name(self, name: str) -> None:
        """A token was issued to a bot the arena starts: in open mode its
        name is held for the arena in the store, so a remote hello at
        another process of this server (a worker) is refused it too. The
        write goes to the store writer's thread; this process refuses the
        name meanwhile from memory."""
        if not self.config.open:
            return
        epoch = self.config.open_epoch
        if self.writer is None:  # no writer thread (the gate alone, in tests)
            try:
                self.store.reserve_started_name(name, epoch)
            except StorageError as exc:
                log.warning("started_name_not_stored", bot=name, error=str(exc))
            return
        task = asyncio.get_running_loop().create_task(self._store_started_name(name, epoch))
        self._storing.add(task)
        task.add_done_callback(self._storing.discard)

    async def _store_started_name(self, name: str, epoch: str) -> None:
        assert self.writer is not None
        try:
            await self.writer.call(self.store.reserve_started_name, name, epoch)
        except StorageError as exc:  # this process still refuses it while the bot runs
            log.warning("started_name_not_stored", bot=name, error=str(exc))

    def _stored(self, name: str, token_hash: str, record: BotRecord) -> None:
        """The store's row of a name just claimed: if a person (or a bot
        registered meanwhile) has it, the open bot lets it go."""
        problem = stored_name_problem(record, token_hash)
        if problem is None:
            return
        if self.writer is None:
            raise IdentityError(problem)
        self._let_go(name, token_hash,
                     lambda conn: conn.fail(ErrorCode.AUTH_FAILED, f"{problem}; connection closed"))

    def _let_go(self, name: str, token_hash: str, close: Callable[[BotConnection], None]) -> None:
        self._open_names.release(name, token_hash)
        for conn in list(self.connections):
            if conn.bot == name and conn.identity is not None and \
                    conn.identity.token_hash == token_hash:
                close(conn)

    def game_of(self, conn: BotConnection) -> str:
        return self._games.get(conn.id, self.default_game)

    # -- out -----------------------------------------------------------------------
    def closed(self, conn: BotConnection) -> None:
        """A connection is gone: counted out (it may still be reading its last bytes)."""
        self.connections.discard(conn)
        if conn.lingering:
            self._lingering.add(conn)
        if conn.admitted:
            conn.admitted = False
            self.caps.release(conn.counted_address, conn.counted_token)
        if conn.identity is not None:
            self.metrics.bots_connected -= 1
        self._games.pop(conn.id, None)

    def close_idle(self, now: float, waiting: set[int]) -> None:
        """Close connections that no table holds and no way out of the lobby
        may seat (``waiting``: ids the lobby may still seat), once idle for
        ``idle_timeout_s`` (the rule is the link's, ``BotLink.idle``)."""
        for conn in list(self.connections):
            conn.check_idle(now, busy=conn.seated is not None or conn.id in waiting)

    def close_all(self) -> None:
        """At shutdown: say bye to every open connection, drop the lingering ones."""
        for task in list(self._storing):
            task.cancel()
        for conn in list(self.connections):
            conn.close(bye=True)
        for conn in list(self._lingering):
            conn.abort()

    # -- who is here -----------------------------------------------------------------
    def connected_bots(self) -> set[str]:
        """Names of the bots connected here: in the lobby or at a table."""
        return {c.bot for c in self.connections if c.bot is not None and not c.closed}

    def disconnect_bot(self, bot: str, reason: str, keep_token: str | None = None) -> int:
        """Close the connections a removed bot (or its replaced token) opened."""
        return disconnect(self.connections, bot, reason, keep_token, self.local_tokens)

    def send_to_bots(self, names: set[str], message: dict[str, Any]) -> int:
        """``message`` (outside any match) to every open connection of these bots."""
        conns = [c for c in self.connections if c.bot in names and not c.closed]
        for conn in conns:
            conn.send(message)
        return len(conns)


def _taken(name: str, holder: str) -> str:
    """Why a name the store holds for ``holder`` is refused."""
    return started_name(name) if holder == STARTED_BY_ARENA else name_taken(name)
