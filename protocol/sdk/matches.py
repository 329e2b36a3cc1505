"""What the bot client knows about its matches, and the errors it raises.

::

    BotError                 what BotClient.run raises
    ├── HandshakeError       the server refused the hello
    └── ConnectionLostError  the connection dropped for good
        └── ServerUnreachableError  no arena answered before the first welcome
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from protocol.messages import Limits, Request


class BotError(Exception):
    """Base of the errors :meth:`BotClient.run` raises."""


class HandshakeError(BotError):
    """The server refused the hello (``auth_failed``, ``unsupported_protocol``
    ...). Reconnecting would not help, so the client stops."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"server refused the connection: {code}: {message}")
        self.code = code


class ConnectionLostError(BotError):
    """The connection dropped and reconnecting is off or kept failing."""


class ServerUnreachableError(ConnectionLostError):
    """No arena answered at the address before the bot was ever welcomed:
    nearly always a wrong port or a server not started, so the client stops
    after a few quick tries instead of retrying for half a minute."""

    def __init__(self, host: str, port: int, cause: BaseException) -> None:
        super().__init__(
            f"cannot reach the arena at {host}:{port} ({str(cause) or type(cause).__name__}): "
            "is it running, and is that its bot port? (--host/--port, ARENA_HOST/ARENA_PORT)")


@dataclass
class PendingRequest:
    """The request a match is waiting on, and what we answered so far."""

    request: Request
    expires: float  # loop time of the deadline
    tried: list[Any] = field(default_factory=list)


@dataclass
class MatchInfo:
    """What the client knows about one match (kept across reconnects)."""

    match: str
    game: str = ""
    seat: int | None = None
    players: tuple[str, ...] = ()
    rules: dict[str, Any] = field(default_factory=dict)
    limits: Limits | None = None
    state: dict[str, Any] | None = None  # the last request's state
    events: int = 0
    requests: int = 0
    commits: dict[tuple[int, int], str] = field(default_factory=dict)
    pending: PendingRequest | None = None
    result: dict[str, Any] | None = None
    deal_problems: list[str] | None = None  # set at match_end or, sealed, at its reveal; [] = all check out
    fallbacks: int = 0  # answers the SDK chose because the strategy failed
