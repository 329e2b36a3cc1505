"""The web application: JSON API, live streams, pages, static files.

Built by :func:`make_app` so the server and the tests share one recipe. The
server owns the store, the hub and the metrics; this app reads them on its
own threads (:class:`~arena.web.limits.ReadPool`) and writes only bots,
tokens and pending tournaments (:mod:`arena.web.accounts`), on the server's
writer thread when it is given one.

A handler whose visitor leaves is cancelled (``handler_cancellation``): a
departed live viewer frees its stream slot at once, not at the next
heartbeat; a store read it started still finishes on its thread.
"""

from __future__ import annotations

import asyncio
import dis
import functools
import inspect
from importlib import resources
from pathlib import Path
from typing import Any

from aiohttp import web
from aiohttp import web_app as aiohttp_app

from arena.metrics import Metrics
from arena.storage.base import NotFoundError, Store
from arena.storage.writer import StoreWriter
from arena.web import accounts, api, data_api, gauntlet_view, pages, sse, tournament_admin
from arena.web.errors import NAME_RE, ApiError, StoreHealth, error_middleware
from arena.web.guard import guard_middleware
from arena.web.keys import (
    AUTH_FAILURES,
    DISCONNECTS,
    HEALTH,
    HUB,
    METRICS,
    QUERIES,
    REGISTRATIONS,
    SETTINGS,
    STOPPING,
    STORE,
    STREAMS,
    WRITER,
    RegistrationMode,
    Settings,
    WebLimits,
)
from arena.web.limits import AddressCounter, RateLimiter, ReadPool
from arena.live import LADDER, LiveHub
from arena.people import PEOPLE
from arena.web.queries import Queries
from arena.web.scopes import ALL

MAX_BODY = 64 * 1024  # registration and tournament configs are small
# No library or version in the Server header: it only helps an attacker.
SERVER_HEADER = "muushig-arena"


async def _security_headers(request: web.Request, response: web.StreamResponse) -> None:
    response.headers["Server"] = SERVER_HEADER
    # Everything is served from this origin; no inline scripts anywhere.
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    if response.content_type == "text/html":
        response.headers.setdefault(
            "Content-Security-Policy",
            "default-src 'self'; img-src 'self' data:; style-src 'self'; "
            "script-src 'self'; connect-src 'self'; base-uri 'none'; frame-ancestors 'none'")


def _valid_scope(scope: str) -> bool:
    return scope in (LADDER, ALL) or NAME_RE.fullmatch(scope) is not None


async def _prepare(request: web.Request, canonical: str) -> None:
    """Compute, off the loop, what a page handler then reads synchronously
    (pages render without awaiting; their expensive reads are cached here)."""
    q = request.app[QUERIES]
    if canonical == "/":
        await q.prepare(LADDER)
    elif canonical == "/partials/standings":
        scope = request.query.get("scope", LADDER)
        if _valid_scope(scope):
            await q.prepare(scope)
    elif canonical == "/tournaments/{id}":
        if _valid_scope(request.match_info["id"]):
            await q.prepare(request.match_info["id"])
    elif canonical == "/bots/{name}":
        scope, name = request.query.get("scope", LADDER), request.match_info["name"]
        if _valid_scope(scope) and NAME_RE.fullmatch(name):
            await q.prepare(scope, bot=name)
    elif canonical == "/people/{name}":
        if NAME_RE.fullmatch(request.match_info["name"]):
            await q.prepare(PEOPLE, bot=request.match_info["name"])
    elif canonical == "/matches/{id}":
        if NAME_RE.fullmatch(request.match_info["id"]):
            await q.match_detail_async(request.match_info["id"])


_AWAITING = frozenset({"GET_AWAITABLE", "GET_AITER", "GET_ANEXT", "BEFORE_ASYNC_WITH"})


@functools.cache
def _never_awaits(handler: Any) -> bool:
    """A coroutine function whose body has no ``await``/``async for``/``async
    with``: it runs to its end in one step, so it can run on a thread."""
    if not inspect.iscoroutinefunction(handler):
        return False
    return not any(i.opname in _AWAITING for i in dis.get_instructions(handler))


def _run_to_end(handler: Any, request: web.Request) -> web.StreamResponse:
    """(a read thread) Drive a handler that never awaits."""
    coroutine = handler(request)
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value
    coroutine.close()
    raise RuntimeError(f"page handler {handler.__name__} awaited on a read thread")


@web.middleware
async def _pages_off_loop(request: web.Request, handler: Any) -> web.StreamResponse:
    """Page handlers read the store synchronously: the expensive parts are
    computed first (``_prepare``), then a handler that never awaits runs on
    a read thread, so neither holds the loop that times the bots."""
    resource = request.match_info.route.resource
    if request.method != "GET" or resource is None or \
            resource.canonical.startswith(("/api", "/static")):
        return await handler(request)
    try:
        await _prepare(request, resource.canonical)
    except (NotFoundError, ApiError):
        pass  # the page handler answers with its own error page
    route_handler = request.match_info.handler
    if _never_awaits(route_handler):
        return await request.app[QUERIES].run(_run_to_end, route_handler, request)
    return await handler(request)


async def _stop_streams(app: web.Application) -> None:
    app[STOPPING].set()


async def _close_reads(app: web.Application) -> None:
    app[QUERIES].close()


async def _forget_middleware_chains(app: web.Application) -> None:
    """aiohttp caches each route's middleware chain in a module-level LRU
    cache (up to 1024 entries) keyed by the handler and the apps serving
    it: after a request, that cache holds this app, and through its keys
    the store, the writer and the server, for as long as the process runs.
    A stopped app is served no more, so its chains go (the cache cannot
    drop one app's entries; other apps of the process, in tests, only
    rebuild theirs on their next request)."""
    cached = getattr(aiohttp_app, "_cached_build_middleware", None)
    if cached is not None:
        cached.cache_clear()


def make_app(store: Store, *, hub: LiveHub, metrics: Metrics,
             admin_token: str | None = None,
             registration: RegistrationMode | str = RegistrationMode.ADMIN,
             limits: WebLimits | None = None, writer: StoreWriter | None = None,
             server_info: dict[str, Any] | None = None,
             hosting: Any = None, people: Any = None, challenges: Any = None,
             connected: Any = None, disconnects: list[Any] | None = None) -> web.Application:
    limits = limits or WebLimits()
    app = web.Application(middlewares=[error_middleware, guard_middleware, _pages_off_loop],
                          client_max_size=MAX_BODY,
                          handler_args={"handler_cancellation": True})
    app[STORE] = store
    app[HUB] = hub
    app[METRICS] = metrics
    reads = ReadPool(limits.concurrent_reads, limits.queued_reads,
                     cpu_share=limits.cpu_share_while_playing,
                     busy=lambda: metrics.tables_running > 0)
    app[QUERIES] = Queries(store, hub, reads=reads,
                           standings_refresh_s=limits.standings_refresh_s,
                           catch_up=writer.flush if writer is not None else None)
    app[SETTINGS] = Settings(admin_token=admin_token,
                             registration=RegistrationMode.parse(registration),
                             limits=limits, server_info=dict(server_info or {}))
    if writer is not None:
        app[WRITER] = writer
    app[HEALTH] = StoreHealth()
    app[DISCONNECTS] = list(disconnects or [])
    app[REGISTRATIONS] = RateLimiter(limits.registrations_per_hour / 3600.0,
                                     limits.registration_burst)
    app[AUTH_FAILURES] = RateLimiter(limits.auth_failures_per_minute / 60.0,
                                     limits.auth_failure_burst)
    app[STREAMS] = AddressCounter(limits.streams_per_address)
    app[STOPPING] = asyncio.Event()
    app.on_shutdown.append(_stop_streams)
    app.on_cleanup.append(_close_reads)
    app.on_cleanup.append(_forget_middleware_chains)
    app.on_response_prepare.append(_security_headers)
    # Order matters: fixed paths (/api/matches/live) before {id} patterns.
    app.router.add_routes(sse.routes)
    app.router.add_routes(accounts.routes)
    app.router.add_routes(tournament_admin.routes)
    if hosting is not None:  # hosted bots: uploads, builds, logs
        from arena.web import hosting_api

        hosting_api.setup(app, hosting)
    if people is not None:  # people at the table: names, tokens, seats
        from arena.web import person_page, play, play_pages

        play.setup(app, people)
        app.router.add_routes(play_pages.routes)
        app.router.add_routes(person_page.routes)
    if challenges is not None:  # a ChallengeLimits: bots' owners may ask for challenges
        from arena.web import challenges as challenge_api

        challenge_api.setup(app, challenges, connected)
    app.router.add_routes(data_api.routes)  # before api's /api/matches/{id}
    app.router.add_routes(api.routes)
    app.router.add_routes(pages.routes)
    app.router.add_routes(gauntlet_view.routes)
    static = Path(str(resources.files("arena.web").joinpath("static")))
    app.router.add_static("/static", static, name="static", append_version=False)
    return app
