"""The bot link: every connection rule of the protocol page, without I/O.

:class:`BotLink` is to :class:`~arena.server.connection.BotConnection`
what websockets' ``Protocol`` is to its ``Connection``: it is fed the bytes
a bot sent and the time they came (``now``, any monotonic clock), and says
what follows, in order -- messages for the server, bytes to write back, and
whether to close. It owns the handshake, the rate limit and its strikes,
the hello and idle deadlines, and one frame reader holding both decoders
(the C reader of plain actions and the SDK decoder) behind :meth:`feed`.
The connection only moves bytes and arms one timer; every rule is tested
on a fake clock (``tests/server/test_link.py``).

What :meth:`BotLink.feed` returns, each in the order the bot sent it:

* :class:`~arena.server.action_frame.PlainAction` -- an ``action``, for the
  host (the C reader's own object: a decision costs no object more);
* :class:`HelloReceived` -- the bot's ``hello``; the link reads nothing more
  until the host answers with :meth:`BotLink.accept` or
  :meth:`BotLink.refuse` (a refused hello's next bytes are not read);
* :class:`CameAlive` -- a valid message from a connection whose seat went
  to autopilot (``awaiting_life``), before that message;
* :class:`Send` -- bytes the link answers with (an ``error``);
* :class:`Close` -- the link's decision to close, after what came before;
  the link reads nothing more.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from arena.server.action_frame import PlainAction
from arena.server.admission import Refusal
from arena.server.inbound import plain_actions
from protocol.codec import Decoder, Encoding, encode
from protocol.errors import ErrorCode, FrameError, ProtocolError, UnknownTypeError
from protocol.messages import (PROTOCOL_VERSION, Bye, Error, Hello, Welcome,
                               action_fields, parse_bot_message)

# Messages credited to the bucket per request sent: its answer, and one
# retry after ``illegal_action``.
REQUEST_CREDIT = 2


class LinkState(enum.Enum):
    AWAITING_HELLO = "awaiting_hello"  # the first message must be a hello
    HELLO_PENDING = "hello_pending"  # the host decides on the hello
    OPEN = "open"  # hello accepted
    CLOSED = "closed"  # a close was decided: nothing more is read


@dataclass(frozen=True)
class LinkLimits:
    """The connection rules' numbers (``ServerConfig`` gives the server's)."""

    hello_timeout_s: float = 5.0
    rate_per_s: float = 50.0
    rate_burst: int = 100
    rate_strikes: int = 10
    idle_timeout_s: float = 60.0
    server_name: str = "muushig-arena"


@dataclass(frozen=True, slots=True)
class HelloReceived:
    hello: Hello


@dataclass(frozen=True, slots=True)
class CameAlive:
    pass


@dataclass(frozen=True, slots=True)
class Send:
    data: bytes


@dataclass(frozen=True, slots=True)
class Close:
    """Close after what was sent. ``why`` names the decision for the log;
    ``bye``: the bot said goodbye (close at once, nothing to linger for)."""

    why: str
    bye: bool = False


LinkEvent = PlainAction | HelloReceived | CameAlive | Send | Close


class BotLink:
    """One bot connection's protocol state (see the module doc)."""

    def __init__(self, limits: LinkLimits, now: float, metrics: Any = None) -> None:
        self.limits = limits
        self.state = LinkState.AWAITING_HELLO
        self.decoder = Decoder.for_server()
        self.metrics = metrics  # counters only (messages, refused frames, errors)
        self.hello_deadline = now + limits.hello_timeout_s
        self.idle_since: float | None = None
        # Set by a table whose seat went to autopilot for timeouts: the lobby
        # does not seat it again until it sends a valid message.
        self.awaiting_life = False
        self._burst = float(limits.rate_burst)
        self.tokens = self._burst
        self._last_refill = now
        self._strikes_left = limits.rate_strikes
        self._out: list[LinkEvent] = []

    @property
    def encoding(self) -> Encoding:
        return self.decoder.encoding or Encoding.MSGPACK

    # -- input --------------------------------------------------------------------
    def feed(self, data: bytes | bytearray, now: float) -> list[LinkEvent] | list[PlainAction]:
        """What the bytes ``data``, read at ``now``, come to (module doc).
        ``b""`` reads on what is buffered (after the host answered a hello)."""
        state = self.state
        if state is LinkState.CLOSED:
            return []  # lingering after a closing error: read and drop
        decoder = self.decoder
        if (state is LinkState.OPEN and decoder.encoding is Encoding.MSGPACK
                and not decoder.buffered and type(data) is bytes and not self.awaiting_life):
            # A playing bot's usual read, whole plain actions, is decoded in
            # C; anything else goes to the decoder, which names what is wrong.
            actions = plain_actions(data, decoder.max_frame)
            if actions is not None and self._spend_all(len(actions), now):
                return actions
            if actions is not None:
                return self._each_action(actions, now)
        out: list[LinkEvent] = []
        self._out = out
        try:
            if data:
                decoder.receive_data(data)
            while self.state is LinkState.OPEN or self.state is LinkState.AWAITING_HELLO:
                message = decoder.next_message()
                if message is None:
                    break
                self._dispatch(message, now)
        except FrameError as exc:
            if self.metrics is not None:
                self.metrics.frames_refused_total += 1
            self._fail(exc.code, exc.message + "; connection closed", "bad_frame")
        return out

    def _each_action(self, actions: list[PlainAction], now: float) -> list[LinkEvent]:
        out: list[LinkEvent] = []
        self._out = out
        for action in actions:
            if self.state is not LinkState.OPEN:
                break
            if self._spend_token(now):
                self._alive()
                out.append(action)
        return out

    def _dispatch(self, message: dict[str, Any], now: float) -> None:
        if not self._spend_token(now):
            return
        if self.state is LinkState.AWAITING_HELLO:
            self._handshake(message)
            return
        try:
            if message.get("type") == "action":
                match, request_id, action = action_fields(message)
                self._alive()
                self._out.append(PlainAction("action", match, request_id, action))
                return
            parsed = parse_bot_message(message)
        except UnknownTypeError as exc:
            self._error(ErrorCode.UNKNOWN_TYPE, exc.message + "; message ignored")
            return
        except ProtocolError as exc:
            # One rule (protocol page, "Bad input"): malformed always closes.
            self._fail(exc.code, exc.message + "; connection closed", "malformed_message")
            return
        self._alive()
        if isinstance(parsed, Bye):
            self.state = LinkState.CLOSED
            self._out.append(Close("bye", bye=True))
        elif isinstance(parsed, Hello):
            self._error(ErrorCode.UNKNOWN_TYPE,
                        "hello was already accepted on this connection; message ignored")

    def _handshake(self, message: dict[str, Any]) -> None:
        if message.get("type") != "hello":
            self._fail(ErrorCode.EXPECTED_HELLO,
                       f"the first message must be a hello, got type {message.get('type')!r:.40}; "
                       "connection closed", "expected_hello")
            return
        try:
            hello = Hello.from_wire(message)
        except ProtocolError as exc:
            self._fail(ErrorCode.MALFORMED, exc.message + "; connection closed", "malformed_hello")
            return
        if hello.protocol != PROTOCOL_VERSION:
            self._fail(ErrorCode.UNSUPPORTED_PROTOCOL,
                       f"protocol {hello.protocol} is not supported; this server speaks "
                       f"{PROTOCOL_VERSION}; connection closed", "unsupported_protocol")
            return
        self.state = LinkState.HELLO_PENDING  # read no further until the host answers
        self._out.append(HelloReceived(hello))

    # -- the host's answers ---------------------------------------------------------
    def accept(self, bot: str) -> bytes:
        """The hello is accepted for ``bot``: the ``welcome`` to send. Feed
        ``b""`` next to read what came after the hello."""
        self.state = LinkState.OPEN
        return self._encode(Welcome(PROTOCOL_VERSION, bot, self.limits.server_name).to_wire())

    def refuse(self, refusal: Refusal, why: str = "hello_refused") -> list[LinkEvent]:
        """The host turns the connection (or its hello) away: the error, then close."""
        fields = {} if refusal.retry_after_s is None else {"retry_after_s": refusal.retry_after_s}
        return self.fail(refusal.code, refusal.message, why, **fields)

    def fail(self, code: ErrorCode, message: str, why: str, **fields: Any) -> list[LinkEvent]:
        """A closing error decided outside the link (a slow reader, a bug)."""
        out: list[LinkEvent] = []
        self._out = out
        self._fail(code, message, why, **fields)
        return out

    def closed(self) -> None:
        """The connection is closed (by either side): nothing more is read."""
        self.state = LinkState.CLOSED

    # -- time -------------------------------------------------------------------------
    def next_deadline(self) -> float | None:
        """When :meth:`tick` may next have something to do (the hello deadline)."""
        if self.state is LinkState.AWAITING_HELLO or self.state is LinkState.HELLO_PENDING:
            return self.hello_deadline
        return None

    def tick(self, now: float) -> list[LinkEvent]:
        """The hello deadline: a hello not complete (or not yet answered) by
        then is refused with ``hello_timeout``."""
        if self.state is LinkState.AWAITING_HELLO and now >= self.hello_deadline:
            return self.fail(ErrorCode.HELLO_TIMEOUT,
                             f"no complete hello within {self.limits.hello_timeout_s:g} s of "
                             "connecting; connection closed", "hello_timeout")
        return []

    def idle(self, now: float, busy: bool) -> list[LinkEvent]:
        """The idle rule, checked now and then by the host: a connection past
        its hello that is not ``busy`` (seated, or waiting for a seat the
        server may give it) for ``idle_timeout_s`` is closed."""
        if self.state is not LinkState.OPEN or busy:
            self.idle_since = None
            return []
        if self.idle_since is None:
            self.idle_since = now
            return []
        limit = self.limits.idle_timeout_s
        if now - self.idle_since < limit:
            return []
        return self.fail(ErrorCode.RATE_LIMITED,
                         f"idle for {limit:g} s, neither seated nor waiting for a seat this "
                         "server may give you; connection closed", "idle_closed")

    # -- the rate limit ---------------------------------------------------------------
    def request_sent(self) -> None:
        """A request went to the bot: its answer (and one retry) never count
        against it, however fast its table plays."""
        self.tokens = min(self._burst, self.tokens + REQUEST_CREDIT)

    def _spend_all(self, n: int, now: float) -> bool:
        """Take ``n`` tokens at once when there are enough (the usual read)."""
        tokens = min(self._burst, self.tokens + (now - self._last_refill) * self.limits.rate_per_s)
        if tokens < n:
            return False
        if self.metrics is not None:
            self.metrics.messages_total += n
        self._last_refill = now
        self.tokens = tokens - n
        return True

    def _spend_token(self, now: float) -> bool:
        """Count a message and take it from the token bucket (refilled by
        the time passed and by each request sent); False when it is over the rate."""
        if self.metrics is not None:
            self.metrics.messages_total += 1
        tokens = min(self._burst, self.tokens + (now - self._last_refill) * self.limits.rate_per_s)
        self._last_refill = now
        if tokens < 1.0:
            self.tokens = tokens
            self._over_rate()
            return False
        self.tokens = tokens - 1.0
        return True

    def _over_rate(self) -> None:
        """A message beyond the bucket: ignored with an error, and after
        ``rate_strikes`` of them the connection is closed."""
        self._strikes_left -= 1
        rate = self.limits.rate_per_s
        if self._strikes_left <= 0:
            self._fail(ErrorCode.RATE_LIMITED,
                       f"too many messages too fast (over {rate:g} per second after a "
                       f"burst of {self._burst:g}); connection closed", "flood_closed")
        else:
            self._error(ErrorCode.RATE_LIMITED, f"over {rate:g} messages per second; message ignored")

    # -- output -------------------------------------------------------------------------
    def _alive(self) -> None:
        if self.awaiting_life:
            self.awaiting_life = False
            self._out.append(CameAlive())

    def _encode(self, wire: dict[str, Any]) -> bytes:
        return encode(wire, self.encoding)

    def _error(self, code: ErrorCode, message: str, **fields: Any) -> None:
        """An error the link decides on, counted like every error."""
        if self.metrics is not None:
            self.metrics.error(code.value)
        self._out.append(Send(self._encode({**Error(code, message).to_wire(), **fields})))

    def _fail(self, code: ErrorCode, message: str, why: str, **fields: Any) -> None:
        if self.state is LinkState.CLOSED:
            return
        self._error(code, message, **fields)
        self.state = LinkState.CLOSED
        self._out.append(Close(why))
