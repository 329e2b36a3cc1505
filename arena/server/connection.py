"""One bot connection: bytes → frames → messages, and the handshake.

This is the thin asyncio adapter around the sans-IO codec. It knows nothing
about tables or games: after a successful ``hello`` it hands every ``action``
to its :class:`ConnectionHost` (the server), and tells it when the
connection is gone. Everything that can grow is bounded here: frame size
(by the decoder), messages per second (a token bucket), and the outgoing
buffer (a reader that falls too far behind is dropped).
"""

from __future__ import annotations

import asyncio
import itertools
import time
from dataclasses import dataclass
from typing import Any, Protocol, cast

import structlog

from protocol.codec import Decoder, Encoding, encode
from protocol.errors import ErrorCode, FrameError, ProtocolError, UnknownTypeError
from protocol.messages import PROTOCOL_VERSION, Action, Bye, Error, Hello, parse_bot_message

log = structlog.get_logger("arena.connection")

_ids = itertools.count(1)


class AuthError(Exception):
    """The hello's token is not accepted (answered with ``auth_failed``)."""


@dataclass(frozen=True)
class Identity:
    """Who a connection speaks for once its hello is accepted."""

    bot: str
    token_hash: str  # seats are given back to a reconnecting bot by this


class ConnectionHost(Protocol):
    def authenticate(self, hello: Hello) -> Identity: ...

    def connection_ready(self, conn: "BotConnection") -> None: ...

    def action_received(self, conn: "BotConnection", action: Action) -> None: ...

    def connection_alive(self, conn: "BotConnection") -> None: ...

    def connection_closed(self, conn: "BotConnection") -> None: ...


class BotConnection(asyncio.Protocol):
    def __init__(self, host: ConnectionHost, *, hello_timeout_s: float, max_write_buffer: int,
                 rate_per_s: float, rate_burst: int, rate_strikes: int, server_name: str) -> None:
        self.id = next(_ids)
        self.host = host
        self.identity: Identity | None = None
        self.decoder = Decoder.for_server()
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.closed_event = asyncio.Event()
        self.seated: Any = None  # the table this connection plays at, if any
        # Set by a table whose seat went to autopilot for timeouts: the lobby
        # does not seat it again until it sends a valid message.
        self.awaiting_life = False
        self.peer = "?"
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
        peer = transport.get_extra_info("peername")
        self.peer = f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else str(peer)
        self.log = self.log.bind(peer=self.peer)
        loop = asyncio.get_running_loop()
        self._hello_timer = loop.call_later(self._hello_timeout_s, self._hello_timed_out)

    def data_received(self, data: bytes) -> None:
        if self.closed:
            return
        try:
            self.decoder.receive_data(data)
            while not self.closed and (message := self.decoder.next_message()) is not None:
                self._dispatch(message)
        except FrameError as exc:
            self.log.warning("bad_frame", code=str(exc.code), error=exc.message, bot=self.bot)
            self.fail(exc.code, exc.message)

    def connection_lost(self, exc: Exception | None) -> None:
        self._mark_closed()

    # -- sending ----------------------------------------------------------------
    def send(self, message: dict[str, Any]) -> None:
        self.send_bytes(encode(message, self.encoding))

    def send_bytes(self, data: bytes) -> None:
        transport = self.transport
        if self.closed or transport is None:
            return
        transport.write(data)
        if transport.get_write_buffer_size() > self._max_write_buffer:
            self.log.warning("slow_reader_dropped", bot=self.bot,
                             buffered=transport.get_write_buffer_size())
            transport.abort()
            self._mark_closed()

    def send_message(self, message: Any) -> None:
        """Send a typed message of ``protocol.messages`` (anything with ``to_wire``)."""
        self.send(message.to_wire())

    def send_error(self, code: ErrorCode, message: str, request_id: int | None = None,
                   match: str | None = None) -> None:
        self.send_message(Error(code, message, request_id, match))

    def fail(self, code: ErrorCode, message: str) -> None:
        """Send a closing error and close this connection (only this one)."""
        self.send_error(code, message)
        self.close()

    def close(self, *, bye: bool = False) -> None:
        if self.closed:
            return
        if bye:
            self.send({"type": "bye"})
        if self.transport is not None:
            self.transport.close()
        self._mark_closed()

    # -- internals ----------------------------------------------------------------
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
                      f"no complete hello within {self._hello_timeout_s:g} s of connecting")

    def grant(self, messages: int = 2) -> None:
        """Credit the bucket for a request sent: answering the server never
        counts against a bot, however fast its table plays (a retry after
        ``illegal_action`` included)."""
        self._tokens = min(self._burst, self._tokens + messages)

    def _within_rate(self) -> bool:
        now = time.monotonic()
        self._tokens = min(self._burst, self._tokens + (now - self._last_refill) * self._rate)
        self._last_refill = now
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return True
        return False

    def _dispatch(self, message: dict[str, Any]) -> None:
        if not self._within_rate():
            self._strikes_left -= 1
            if self._strikes_left <= 0:
                self.log.warning("flood_closed", bot=self.bot)
                self.fail(ErrorCode.RATE_LIMITED, "too many messages too fast; connection closed")
            else:
                self.send_error(ErrorCode.RATE_LIMITED,
                                f"over {self._rate:g} messages per second; message ignored")
            return
        if self.identity is None:
            self._handshake(message)
            return
        try:
            parsed = parse_bot_message(message)
        except UnknownTypeError as exc:
            self.send_error(ErrorCode.UNKNOWN_TYPE, exc.message)
            return
        except ProtocolError as exc:
            # A well-framed map with a bad field: say so, keep the connection.
            self.send_error(exc.code, exc.message + " (message ignored)")
            return
        if self.awaiting_life:
            self.awaiting_life = False
            self.host.connection_alive(self)
        if isinstance(parsed, Action):
            self.host.action_received(self, parsed)
        elif isinstance(parsed, Bye):
            self.log.info("bye", bot=self.bot)
            self.close()
        elif isinstance(parsed, Hello):
            self.send_error(ErrorCode.UNKNOWN_TYPE, "hello was already accepted on this connection")

    def _handshake(self, message: dict[str, Any]) -> None:
        if message.get("type") != "hello":
            self.fail(ErrorCode.EXPECTED_HELLO,
                      f"the first message must be a hello, got type {message.get('type')!r}")
            return
        try:
            hello = Hello.from_wire(message)
        except ProtocolError as exc:
            self.fail(ErrorCode.MALFORMED, exc.message)
            return
        if hello.protocol != PROTOCOL_VERSION:
            self.fail(ErrorCode.UNSUPPORTED_PROTOCOL,
                      f"protocol {hello.protocol} is not supported; this server speaks {PROTOCOL_VERSION}")
            return
        try:
            self.identity = self.host.authenticate(hello)
        except AuthError as exc:
            self.log.info("auth_failed", reason=str(exc))
            self.fail(ErrorCode.AUTH_FAILED, str(exc))
            return
        if self._hello_timer is not None:
            self._hello_timer.cancel()
        self.log = self.log.bind(bot=self.identity.bot)
        self.send({"type": "welcome", "protocol": PROTOCOL_VERSION, "bot": self.identity.bot,
                   "server": self._server_name})
        self.log.info("bot_connected", encoding=str(self.encoding))
        self.host.connection_ready(self)
