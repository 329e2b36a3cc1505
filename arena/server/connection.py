"""One bot connection: the asyncio side of the sans-IO bot link.

The rules -- handshake, rate limit, hello and idle deadlines, what closes
-- are :class:`arena.server.link.BotLink`'s, which this class feeds the
bytes it reads and the time, and whose answers it carries out: bytes to
write, a close, messages for its :class:`ConnectionHost` (the server),
which decides whether it may stay once its peer is known, who its
``hello`` speaks for, gets every ``action``, and hears when the connection
is gone. The outgoing buffer is bounded here, by the transport's own
count (a reader that falls too far behind is dropped).

Every close the server decides on is preceded by an ``error`` saying why
(or ``bye``), and is a *lingering* close: the server half-closes after the
error and keeps reading (and discarding) for a moment, because closing a
socket with unread input resets it, and a reset can destroy the error
before the bot reads it.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, cast

import structlog

from arena.server.action_frame import PlainAction
from arena.server.admission import Refusal
from arena.server.errors import ServerError
from arena.server.link import (BotLink, CameAlive, Close, HelloReceived, LinkEvent,
                               LinkLimits, Send)
from protocol.codec import Encoding, encode
from protocol.errors import ErrorCode
from protocol.messages import Bye, Error, Hello

if TYPE_CHECKING:
    from arena.metrics import Metrics

log = structlog.get_logger("arena.connection")

_ids = itertools.count(1)

# Connections lingering after a closing error, over all connections: past
# this many (a crowd being refused), close at once rather than hold sockets.
MAX_LINGERING = 1024
_lingering = 0


class AuthError(ServerError):
    """The hello's token is not accepted (answered with ``auth_failed``)."""


class HelloRefused(ServerError):
    """The hello may not be served now (a limit); carries the error to send."""

    def __init__(self, refusal: Refusal) -> None:
        super().__init__(refusal.message)
        self.refusal = refusal


@dataclass(frozen=True)
class Identity:
    """Who a connection speaks for once its hello is accepted."""

    bot: str
    token_hash: str  # seats are given back to a reconnecting bot by this


class ConnectionHost(Protocol):
    def connection_opened(self, conn: "BotConnection") -> Refusal | None: ...

    def authenticate(self, hello: Hello, conn: "BotConnection") -> Identity: ...

    def connection_ready(self, conn: "BotConnection") -> None: ...

    def action_received(self, conn: "BotConnection", match: str, request_id: int,
                        action: Any) -> None: ...

    def connection_alive(self, conn: "BotConnection") -> None: ...

    def connection_closed(self, conn: "BotConnection") -> None: ...


class BotConnection(asyncio.Protocol):
    """One bot's TCP (or Unix socket) connection, from hello to close.

    It moves bytes between the socket and its :class:`BotLink`, arms the
    link's hello deadline, and hands what the link lets through -- a hello,
    actions, a bot come back to life, its leaving -- to its
    :class:`ConnectionHost` (the server). It never decides about matches.
    """

    def __init__(self, host: ConnectionHost, *, hello_timeout_s: float, max_write_buffer: int,
                 rate_per_s: float, rate_burst: int, rate_strikes: int, server_name: str,
                 linger_s: float = 2.0, idle_timeout_s: float = 60.0,
                 metrics: "Metrics | None" = None) -> None:
        self.id = next(_ids)
        self.host = host
        self.identity: Identity | None = None
        self.link = BotLink(LinkLimits(hello_timeout_s=hello_timeout_s, rate_per_s=rate_per_s,
                                       rate_burst=rate_burst, rate_strikes=rate_strikes,
                                       idle_timeout_s=idle_timeout_s, server_name=server_name),
                            time.monotonic(), metrics)
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.closed_event = asyncio.Event()
        self._seated: Any = None
        self.peer = "?"
        self.address = "?"  # the peer's host, what per-address limits count
        # What the host's connection caps count for this connection.
        self.admitted = False
        self.counted_address: str | None = None
        self.counted_token: str | None = None
        self.max_matches: int | None = None  # from hello: leave after this many
        self.ladder = False  # from hello: open to the hosted-bot ladder
        self.movable = False  # from hello: follows a ``move`` to another node
        self.people = False  # from hello: may be seated with a person
        self.matches_seated = 0
        self._linger_s = linger_s
        self._linger_timer: asyncio.TimerHandle | None = None
        self._hello_timer: asyncio.TimerHandle | None = None
        self._max_write_buffer = max_write_buffer
        self.log = log.bind(conn=self.id)

    # -- seat -------------------------------------------------------------------
    @property
    def seated(self) -> Any:
        """The table this connection plays at, if any."""
        return self._seated

    @seated.setter
    def seated(self, table: Any) -> None:
        # Counted where a table takes the connection, whoever seats it
        # (matchmaking, a claim, a reconnect), for hello.max_matches.
        if table is not None and table is not self._seated:
            self.matches_seated += 1
        self._seated = table

    @property
    def matches_used_up(self) -> bool:
        return self.max_matches is not None and self.matches_seated >= self.max_matches

    @property
    def awaiting_life(self) -> bool:
        """Set by a table whose seat went to autopilot for timeouts: the lobby
        does not seat it again until it sends a valid message."""
        return self.link.awaiting_life

    @awaiting_life.setter
    def awaiting_life(self, value: bool) -> None:
        self.link.awaiting_life = value

    # -- identity -------------------------------------------------------------
    @property
    def bot(self) -> str | None:
        return self.identity.bot if self.identity else None

    @property
    def encoding(self) -> Encoding:
        return self.link.encoding

    # -- asyncio.Protocol -----------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # A stream transport; not checked with isinstance, as other loops'
        # transports (uvloop's) do not derive from asyncio.Transport.
        self.transport = cast(asyncio.Transport, transport)
        # The transport calls pause_writing once more than this is unread:
        # the cap is checked by asyncio's own count, not by a call per send.
        self.transport.set_write_buffer_limits(high=self._max_write_buffer)
        peer = transport.get_extra_info("peername")
        self.peer = f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else str(peer)
        self.address = str(peer[0]) if isinstance(peer, tuple) else str(peer)
        self.log = self.log.bind(peer=self.peer)
        # Admission runs here, not in the protocol factory: only now is there
        # a peer to count and a transport to say "no" on.
        refusal = self.host.connection_opened(self)
        if refusal is not None:
            self.log.info("connection_refused", reason=refusal.message)
            self.refuse(refusal)
            return
        deadline = self.link.next_deadline()
        if deadline is not None:
            loop = asyncio.get_running_loop()
            self._hello_timer = loop.call_later(max(0.0, deadline - time.monotonic()),
                                                self._on_deadline)

    def data_received(self, data: bytes) -> None:
        if self.closed:
            return  # lingering after a closing error: read and drop
        try:
            events = self.link.feed(data, time.monotonic())
            host = self.host
            for event in events:
                if self.closed:
                    break
                if type(event) is PlainAction:
                    host.action_received(self, event.match, event.id, event.action)
                else:
                    self._carry_out(event)
        except Exception:
            # A bug of ours must not cost the bot its reason, nor the server
            # more than this connection.
            self.log.exception("message_handler_failed", bot=self.bot)
            self._carry_out_all(self.link.fail(
                ErrorCode.MALFORMED, "the server could not handle this message (an internal "
                "error, logged); connection closed", "internal_error"))

    def connection_lost(self, exc: Exception | None) -> None:
        global _lingering
        if self._linger_timer is not None:
            self._linger_timer.cancel()
            self._linger_timer = None
            _lingering -= 1
        self._mark_closed()

    # -- the link's decisions ---------------------------------------------------------
    def _carry_out_all(self, events: list[LinkEvent]) -> None:
        for event in events:
            if self.closed:
                return
            self._carry_out(event)

    def _carry_out(self, event: LinkEvent) -> None:
        if type(event) is PlainAction:
            self.host.action_received(self, event.match, event.id, event.action)
        elif type(event) is Send:
            self.send_bytes(event.data)
        elif type(event) is CameAlive:
            self.host.connection_alive(self)
        elif type(event) is Close:
            if event.bye:
                self.log.info("bye", bot=self.bot)
                self.close()
            else:
                self.log.info(event.why, bot=self.bot)
                self._linger_close()
        elif type(event) is HelloReceived:
            self._hello(event)

    def _hello(self, event: HelloReceived) -> None:
        try:
            identity = self.host.authenticate(event.hello, self)
        except AuthError as exc:
            self.log.info("auth_failed", reason=str(exc))
            self._carry_out_all(self.link.fail(ErrorCode.AUTH_FAILED,
                                               f"{exc}; connection closed", "auth_failed"))
            return
        except HelloRefused as exc:
            self.log.info("hello_refused", reason=exc.refusal.message)
            self.refuse(exc.refusal)
            return
        self.identity = identity
        self.max_matches = event.hello.max_matches
        self.ladder = event.hello.ladder  # the hosted ladder may seat it
        self.people = event.hello.people  # a person's table may seat it
        self.movable = event.hello.movable
        if self._hello_timer is not None:
            self._hello_timer.cancel()
        self.log = self.log.bind(bot=identity.bot)
        self.send_bytes(self.link.accept(identity.bot))
        self.log.info("bot_connected", encoding=str(self.encoding))
        self.host.connection_ready(self)
        if not self.closed:
            self.data_received(b"")  # what came after the hello, read now

    def _on_deadline(self) -> None:
        self._hello_timer = None
        if not self.closed:
            self._carry_out_all(self.link.tick(time.monotonic()))

    def check_idle(self, now: float, busy: bool) -> None:
        """The idle rule (the host's periodic check): see :meth:`BotLink.idle`."""
        if not self.closed:
            self._carry_out_all(self.link.idle(now, busy))

    # -- sending ----------------------------------------------------------------
    def send(self, message: dict[str, Any]) -> None:
        self.send_bytes(encode(message, self.encoding))

    def send_bytes(self, data: bytes, ends_with_request: bool = False) -> None:
        """Write ``data``; when it ends with a request, credit the bucket for
        the answer: answering the server never counts against a bot, however
        fast its table plays (a retry after ``illegal_action`` included)."""
        transport = self.transport
        if self.closed or transport is None:
            return
        transport.write(data)
        if ends_with_request:
            self.link.request_sent()

    def pause_writing(self) -> None:
        """More than ``max_write_buffer`` bytes are unread (the transport's
        high-water mark): the bot reads too slowly to play, and is dropped.
        Called from inside ``transport.write``, once until the buffer
        drains; the error written here does not call it again (the
        transport is paused already), and the close that follows is final."""
        if self.closed:
            return
        transport = self.transport
        self.log.warning("slow_reader_dropped", bot=self.bot,
                         buffered=transport.get_write_buffer_size() if transport else None)
        # Queued behind what it has not read: it gets the reason if it
        # reads within the linger time, else the socket is reset.
        self.fail(ErrorCode.RATE_LIMITED,
                  f"more than {self._max_write_buffer} bytes sent to this connection are "
                  "unread; it reads too slowly to play; connection closed")

    def send_message(self, message: Any) -> None:
        """Send a typed message of ``protocol.messages`` (anything with ``to_wire``)."""
        self.send(message.to_wire())

    def send_error(self, code: ErrorCode, message: str, request_id: int | None = None,
                   match: str | None = None) -> None:
        self.send_message(Error(code, message, request_id, match))

    def fail(self, code: ErrorCode, message: str, **fields: Any) -> None:
        """Send a closing error and close this connection (only this one)."""
        if not self.closed:
            self._carry_out_all(self.link.fail(code, message, "failed", **fields))

    def refuse(self, refusal: Refusal) -> None:
        if not self.closed:
            self._carry_out_all(self.link.refuse(refusal))

    def leave(self) -> None:
        """Say ``bye`` and close: the server is done with this bot (its
        ``max_matches`` are played)."""
        if self.closed:
            return
        self.send_message(Bye())
        self._linger_close()

    def move(self, message: dict[str, Any]) -> None:
        """Send ``move`` (its slot is played on another node) and close."""
        if not self.closed:
            self.send(message)
            self._linger_close()

    def close(self, *, bye: bool = False) -> None:
        if self.closed:
            return
        if bye:
            self.send_message(Bye())
        if self.transport is not None:
            self.transport.close()
        self._mark_closed()

    # -- internals ----------------------------------------------------------------
    def _linger_close(self) -> None:
        """Half-close after what was sent; read and drop until the peer
        closes too, or ``linger_s`` has passed."""
        global _lingering
        transport = self.transport
        if transport is None or transport.is_closing() or self._linger_timer is not None:
            # (lingering already: a close decided while the last was sent)
            self._mark_closed()
            return
        if self._linger_s <= 0 or _lingering >= MAX_LINGERING or not transport.can_write_eof():
            transport.close()
            self._mark_closed()
            return
        try:
            transport.write_eof()
        except (OSError, RuntimeError, NotImplementedError):
            transport.close()
            self._mark_closed()
            return
        _lingering += 1
        self._linger_timer = asyncio.get_running_loop().call_later(self._linger_s, transport.abort)
        self._mark_closed()  # after: the host sees ``lingering`` and may end it early

    @property
    def lingering(self) -> bool:
        return self._linger_timer is not None

    def abort(self) -> None:
        """Drop the socket now (a lingering close cut short at shutdown)."""
        if self.transport is not None:
            self.transport.abort()

    def _mark_closed(self) -> None:
        if self.closed:
            return
        self.closed = True
        self.link.closed()
        if self._hello_timer is not None:
            self._hello_timer.cancel()
        self.closed_event.set()
        self.host.connection_closed(self)
