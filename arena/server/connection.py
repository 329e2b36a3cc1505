"""One bot connection: bytes → frames → messages, and the handshake.

This is the thin asyncio adapter around the sans-IO codec. It knows nothing
about tables or games: it asks its :class:`ConnectionHost` (the server)
whether it may stay once its peer is known, who its ``hello`` speaks for,
hands it every ``action``, and tells it when the connection is gone.
Everything that can grow is bounded here: frame size and nesting (by the
decoder), messages per second (a token bucket), and the outgoing buffer (a
reader that falls too far behind is dropped).

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

from arena.server.admission import Refusal
from arena.server.errors import ServerError
from arena.server.inbound import plain_actions
from protocol.codec import Decoder, Encoding, encode
from protocol.errors import ErrorCode, FrameError, ProtocolError, UnknownTypeError
from protocol.messages import (PROTOCOL_VERSION, Bye, Error, Hello, Welcome,
                               action_fields, parse_bot_message)

if TYPE_CHECKING:
    from arena.metrics import Metrics

log = structlog.get_logger("arena.connection")

_ids = itertools.count(1)

# Connections lingering after a closing error, over all connections: past
# this many (a crowd being refused), close at once rather than hold sockets.
MAX_LINGERING = 1024
_lingering = 0

# Messages credited to the bucket per request sent: its answer, and one
# retry after ``illegal_action``.
REQUEST_CREDIT = 2


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

    It frames and decodes what the bot sends (JSON lines or msgpack), holds
    the bot to the hello deadline, the rate limit and the write buffer cap,
    answers its protocol mistakes with ``error`` messages, and hands what is
    left -- a ready bot, its actions, its leaving -- to its
    :class:`ConnectionHost` (the server). It never decides about matches.
    """

    def __init__(self, host: ConnectionHost, *, hello_timeout_s: float, max_write_buffer: int,
                 rate_per_s: float, rate_burst: int, rate_strikes: int, server_name: str,
                 linger_s: float = 2.0, metrics: "Metrics | None" = None) -> None:
        self.id = next(_ids)
        self.host = host
        self.identity: Identity | None = None
        self.decoder = Decoder.for_server()
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.closed_event = asyncio.Event()
        self._seated: Any = None
        # Set by a table whose seat went to autopilot for timeouts: the lobby
        # does not seat it again until it sends a valid message.
        self.awaiting_life = False
        self.peer = "?"
        self.address = "?"  # the peer's host, what per-address limits count
        # What the host's connection caps count for this connection.
        self.admitted = False
        self.counted_address: str | None = None
        self.counted_token: str | None = None
        self.max_matches: int | None = None  # from hello: leave after this many
        self.ladder = False  # from hello: open to the hosted-bot ladder
        self.matches_seated = 0
        self.idle_since: float | None = None  # set by the host while nobody wants it
        self._linger_s = linger_s
        self._linger_timer: asyncio.TimerHandle | None = None
        self._metrics = metrics
        self._hello_timeout_s = hello_timeout_s
        self._hello_timer: asyncio.TimerHandle | None = None
        self._max_write_buffer = max_write_buffer
        self._rate = rate_per_s
        self._burst = float(rate_burst)
        self._tokens = float(rate_burst)
        self._last_refill = time.monotonic()
        self._strikes_left = rate_strikes
        self._server_name = server_name
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

    # -- identity -------------------------------------------------------------
    @property
    def bot(self) -> str | None:
        return self.identity.bot if self.identity else None

    @property
    def encoding(self) -> Encoding:
        return self.decoder.encoding or Encoding.MSGPACK

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
        loop = asyncio.get_running_loop()
        self._hello_timer = loop.call_later(self._hello_timeout_s, self._hello_timed_out)

    def data_received(self, data: bytes) -> None:
        if self.closed:
            return  # lingering after a closing error: read and drop
        decoder = self.decoder
        try:
            # A playing bot's usual read, whole plain actions, is decoded in
            # C; anything else goes to the decoder, which names what is wrong.
            # (A loop hands bytes; the compiled reader takes nothing else.)
            if (self.identity is not None and decoder.encoding is Encoding.MSGPACK
                    and not decoder.buffered and type(data) is bytes):
                actions = plain_actions(data, decoder.max_frame)
                if actions is not None:
                    for action in actions:
                        if self.closed:
                            break
                        self._action(action.match, action.id, action.action)
                    return
            decoder.receive_data(data)
            while not self.closed:
                message = decoder.next_message()
                if message is None:
                    break
                self._dispatch(message)
        except FrameError as exc:
            if self._metrics is not None:
                self._metrics.frames_refused_total += 1
            self.log.warning("bad_frame", code=str(exc.code), error=exc.message, bot=self.bot)
            self.fail(exc.code, exc.message + "; connection closed")
        except Exception:
            # A bug of ours must not cost the bot its reason, nor the server
            # more than this connection.
            self.log.exception("message_handler_failed", bot=self.bot)
            self.fail(ErrorCode.MALFORMED, "the server could not handle this message (an "
                      "internal error, logged); connection closed")

    def connection_lost(self, exc: Exception | None) -> None:
        global _lingering
        if self._linger_timer is not None:
            self._linger_timer.cancel()
            self._linger_timer = None
            _lingering -= 1
        self._mark_closed()

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
            self._tokens = min(self._burst, self._tokens + REQUEST_CREDIT)

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
        if self.closed:
            return
        self._send_own_error(code, message, **fields)
        self._linger_close()

    def refuse(self, refusal: Refusal) -> None:
        fields = {} if refusal.retry_after_s is None else {"retry_after_s": refusal.retry_after_s}
        self.fail(refusal.code, refusal.message, **fields)

    def leave(self) -> None:
        """Say ``bye`` and close: the server is done with this bot (its
        ``max_matches`` are played)."""
        if self.closed:
            return
        self.send_message(Bye())
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
    def _send_own_error(self, code: ErrorCode, message: str, **fields: Any) -> None:
        """An error this connection decides on, counted like every error."""
        if self._metrics is not None:
            self._metrics.error(code.value)
        self.send({**Error(code, message).to_wire(), **fields})  # fields: retry_after_s, ...

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
        if self._hello_timer is not None:
            self._hello_timer.cancel()
        self.closed_event.set()
        self.host.connection_closed(self)

    def _hello_timed_out(self) -> None:
        if self.identity is None and not self.closed:
            self.log.info("hello_timeout")
            self.fail(ErrorCode.HELLO_TIMEOUT,
                      f"no complete hello within {self._hello_timeout_s:g} s of connecting; "
                      "connection closed")

    def _over_rate(self) -> None:
        """A message beyond the token bucket: ignored with an error, and after
        ``rate_strikes`` of them the connection is closed."""
        self._strikes_left -= 1
        if self._strikes_left <= 0:
            self.log.warning("flood_closed", bot=self.bot)
            self.fail(ErrorCode.RATE_LIMITED,
                      f"too many messages too fast (over {self._rate:g} per second after a "
                      f"burst of {self._burst:g}); connection closed")
        else:
            self._send_own_error(ErrorCode.RATE_LIMITED,
                                 f"over {self._rate:g} messages per second; message ignored")

    def _spend_token(self) -> bool:
        """Count a message and take it from the token bucket (refilled by
        the time passed and by each request sent); False when it is over the rate."""
        if self._metrics is not None:
            self._metrics.messages_total += 1
        now = time.monotonic()
        tokens = min(self._burst, self._tokens + (now - self._last_refill) * self._rate)
        self._last_refill = now
        if tokens < 1.0:
            self._tokens = tokens
            self._over_rate()
            return False
        self._tokens = tokens - 1.0
        return True

    def _action(self, match: str, request_id: int, action: Any) -> None:
        """An action decoded in one piece (:func:`plain_actions`)."""
        if not self._spend_token():
            return
        if self.awaiting_life:
            self._came_alive()
        self.host.action_received(self, match, request_id, action)

    def _came_alive(self) -> None:
        """A valid message from a connection whose seat went to autopilot
        for timeouts: the lobby may seat it again. (Called behind a check
        of ``awaiting_life``, which costs less than a call per message.)"""
        self.awaiting_life = False
        self.host.connection_alive(self)

    def _dispatch(self, message: dict[str, Any]) -> None:
        if not self._spend_token():
            return
        if self.identity is None:
            self._handshake(message)
            return
        try:
            if message.get("type") == "action":
                # Every decision's answer: its fields go to the host as they
                # are, without an Action object in between.
                match, request_id, action = action_fields(message)
                if self.awaiting_life:
                    self._came_alive()
                self.host.action_received(self, match, request_id, action)
                return
            parsed = parse_bot_message(message)
        except UnknownTypeError as exc:
            self._send_own_error(ErrorCode.UNKNOWN_TYPE, exc.message + "; message ignored")
            return
        except ProtocolError as exc:
            # One rule (protocol page, "Bad input"): malformed always closes.
            self.log.info("malformed_message", error=exc.message)
            self.fail(exc.code, exc.message + "; connection closed")
            return
        if self.awaiting_life:
            self._came_alive()
        if isinstance(parsed, Bye):
            self.log.info("bye", bot=self.bot)
            self.close()
        elif isinstance(parsed, Hello):
            self._send_own_error(ErrorCode.UNKNOWN_TYPE,
                                 "hello was already accepted on this connection; message ignored")

    def _handshake(self, message: dict[str, Any]) -> None:
        if message.get("type") != "hello":
            self.fail(ErrorCode.EXPECTED_HELLO,
                      f"the first message must be a hello, got type {message.get('type')!r:.40}; "
                      "connection closed")
            return
        try:
            hello = Hello.from_wire(message)
        except ProtocolError as exc:
            self.fail(ErrorCode.MALFORMED, exc.message + "; connection closed")
            return
        if hello.protocol != PROTOCOL_VERSION:
            self.fail(ErrorCode.UNSUPPORTED_PROTOCOL,
                      f"protocol {hello.protocol} is not supported; this server speaks "
                      f"{PROTOCOL_VERSION}; connection closed")
            return
        try:
            identity = self.host.authenticate(hello, self)
        except AuthError as exc:
            self.log.info("auth_failed", reason=str(exc))
            self.fail(ErrorCode.AUTH_FAILED, f"{exc}; connection closed")
            return
        except HelloRefused as exc:
            self.log.info("hello_refused", reason=exc.refusal.message)
            self.refuse(exc.refusal)
            return
        self.identity = identity
        self.max_matches = hello.max_matches
        self.ladder = hello.ladder  # the hosted ladder may seat it
        if self._hello_timer is not None:
            self._hello_timer.cancel()
        self.log = self.log.bind(bot=self.identity.bot)
        self.send_message(Welcome(PROTOCOL_VERSION, self.identity.bot, self._server_name))
        self.log.info("bot_connected", encoding=str(self.encoding))
        self.host.connection_ready(self)
