"""The web port's door: how many connections, from whom, for how long.

aiohttp's server has no cap on connections and no time limit on a request's
headers: an idle socket is kept until the visitor goes, so one address can
hold every file descriptor of the process, and then the bot port cannot
accept a bot either. The guard sits between the listening socket and
aiohttp (it is the protocol factory given to ``loop.create_server``):

* connections are counted in total and per remote address; over either
  cap a connection gets a short 503 and is closed before aiohttp sees it.
  The total is kept below the process's descriptor limit, so the bot port
  always has descriptors left (``web_connection_caps``);
* a request's headers and body must arrive within ``request_timeout_s`` of
  its first byte (of the connection, for the first request): a connection
  that sends nothing, or trickles, is cut. Between requests aiohttp's own
  keep-alive timeout applies; a handler that streams (live pages) is not
  timed.

The middleware (``guard_middleware``) tells the guard when aiohttp has a
whole request: it reads the body (at most the app's ``client_max_size``)
before the handler runs, still under the deadline.
"""

from __future__ import annotations

import asyncio
import resource
import time
from dataclasses import dataclass
from typing import Any, Awaitable, Callable

import structlog
from aiohttp import web

from arena.server.admission import ConnectionCaps
from arena.server.retry import LogThrottle

log = structlog.get_logger("arena.web")

# Descriptors kept for everything but the two ports (the database and its
# WAL, log files, pipes to local bots, the store's read threads).
RESERVED_DESCRIPTORS = 64


@dataclass(frozen=True)
class WebConnectionLimits:
    max_connections: int = 1024  # all visitors; lowered to the descriptor budget
    per_address: int = 64  # one address (live streams, a browser's parallel loads)
    request_timeout_s: float = 10.0  # headers and body of one request
    upload_timeout_s: float = 300.0  # a streamed upload (a hosted bot's archive), in all
    keepalive_timeout_s: float = 15.0  # idle between two requests (aiohttp's own)


def web_connection_caps(limits: WebConnectionLimits,
                        open_files: int | None = None) -> tuple[int, int]:
    """(total, per address) for the web port: the configured caps, lowered
    so that the web may use at most half of what the descriptor limit leaves
    after the reserve; the other half stays for the bot port."""
    if open_files is None:
        open_files = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if open_files == resource.RLIM_INFINITY:
        return limits.max_connections, limits.per_address
    budget = max(2, (open_files - RESERVED_DESCRIPTORS) // 2)
    total = min(limits.max_connections, budget)
    # One address never takes the whole web: others still reach /api/health.
    per_address = max(1, min(limits.per_address, total // 4 if total >= 8 else total))
    return total, per_address


class ConnectionGuard:
    """Admits, times and counts the web port's connections (see the module)."""

    def __init__(self, limits: WebConnectionLimits, open_files: int | None = None) -> None:
        # aiohttp's web.Server, once its runner is set up (after the app is frozen).
        self.handler_factory: Callable[[], Any] | None = None
        self.limits = limits
        total, per_address = web_connection_caps(limits, open_files)
        self.caps = ConnectionCaps(total=total, per_address=per_address, per_token=0)
        self._by_transport: dict[Any, GuardedProtocol] = {}
        self.refused = 0
        self.timed_out = 0
        self._refusal_log = LogThrottle(every_s=60.0)

    def __call__(self) -> "GuardedProtocol":
        return GuardedProtocol(self)

    @property
    def open(self) -> int:
        return self.caps.open

    def _refuse(self, address: str, reason: str) -> None:
        self.refused += 1
        held_back = self._refusal_log.allow(time.monotonic())
        if held_back is not None:
            log.warning("web_connection_refused", address=address, reason=reason,
                        refused=self.refused, not_logged=held_back)

    def protocol_of(self, request: web.BaseRequest) -> "GuardedProtocol | None":
        return self._by_transport.get(request.transport)


_REFUSED = (b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 5\r\nConnection: close\r\n"
            b"Content-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\n\r\n%s")


class GuardedProtocol(asyncio.Protocol):
    """One web connection: aiohttp's handler behind a count and a deadline."""

    def __init__(self, guard: ConnectionGuard) -> None:
        self._guard = guard
        self._inner: Any = None
        self._transport: asyncio.Transport | None = None
        self._address: str | None = None
        self._deadline: asyncio.TimerHandle | None = None
        self._in_handler = 0

    # -- asyncio's side ------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        peer = transport.get_extra_info("peername")
        address = str(peer[0]) if isinstance(peer, tuple) else "local"
        refusal = self._guard.caps.admit(address)
        if refusal is not None:
            body = refusal.message.encode()
            transport.write(_REFUSED % (len(body), body))
            transport.close()
            self._guard._refuse(address, refusal.message)
            return
        self._transport, self._address = transport, address
        self._guard._by_transport[transport] = self
        self._arm()  # the first request's time runs from the connect
        assert self._guard.handler_factory is not None
        self._inner = self._guard.handler_factory()
        self._inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        if self._inner is None:
            return  # refused: what it sends is dropped with it
        if self._deadline is None and not self._in_handler:
            self._arm()  # the first byte of the next request
        self._inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self._inner.eof_received() if self._inner is not None else None

    def pause_writing(self) -> None:
        if self._inner is not None:
            self._inner.pause_writing()

    def resume_writing(self) -> None:
        if self._inner is not None:
            self._inner.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self._inner is None:
            return
        self._guard._by_transport.pop(self._transport, None)
        self._guard.caps.release(self._address, None)
        inner, self._inner = self._inner, None
        inner.connection_lost(exc)

    # -- the deadline ---------------------------------------------------------------
    def _arm(self, seconds: float | None = None) -> None:
        self._disarm()
        loop = asyncio.get_running_loop()
        self._deadline = loop.call_later(seconds or self._guard.limits.request_timeout_s,
                                         self._too_slow)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _too_slow(self) -> None:
        self._deadline = None
        if self._transport is not None:
            self._guard.timed_out += 1
            self._transport.abort()

    # -- the middleware's side ------------------------------------------------------
    def request_read(self, streamed: bool = False) -> None:
        """The handler starts: untimed, or (``streamed``: it reads the body
        itself) with the upload's time in all."""
        self._in_handler += 1
        if streamed:
            self._arm(self._guard.limits.upload_timeout_s)
        else:
            self._disarm()

    def request_done(self) -> None:
        self._in_handler -= 1
        self._disarm()


GUARD = web.AppKey("connection_guard", ConnectionGuard)


class GuardedSite(web.TCPSite):
    """aiohttp's TCP site with the guard as the listening socket's protocol."""

    def __init__(self, runner: web.BaseRunner, host: str | None, port: int, *,
                 guard: ConnectionGuard, backlog: int = 1024) -> None:
        super().__init__(runner, host, port, backlog=backlog)
        self._guard = guard

    async def start(self) -> None:
        await web.BaseSite.start(self)  # registers the site with its runner
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(self._guard, self._host, self._port,
                                                backlog=self._backlog, reuse_address=True)
        self._bound_port = self._server.sockets[0].getsockname()[1]


@web.middleware
async def guard_middleware(request: web.Request,
                           handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
                           ) -> web.StreamResponse:
    guard = request.app.get(GUARD)
    protocol = guard.protocol_of(request) if guard is not None else None
    if protocol is None:  # a test client without the guard
        return await handler(request)
    streamed = request.content_type.startswith("multipart/")
    if request.body_exists and not streamed:
        await request.read()  # under the deadline, at most client_max_size; kept for the handler
    protocol.request_read(streamed)
    try:
        return await handler(request)
    finally:
        protocol.request_done()
