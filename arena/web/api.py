"""Read-only JSON API: standings, tournaments, matches, bots, health.

Field names are documented in ``API.md`` next to this file and are stable.
Every store read runs on the read threads (``await q.run(...)``), never on
the event loop that times the bots.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Callable

from aiohttp import web

import arena.pure
from arena.collector import WATCH
from arena.storage.base import MatchStatus, StorageError
from arena.web.accounts import viewer_is_admin
from arena.web.errors import (MAX_OFFSET, ApiError, check_name, int_param, page, page_of,
                              pagination)
from arena.web.keys import HEALTH, HUB, METRICS, QUERIES, SETTINGS, WRITER, RegistrationMode
from arena.web.ladders import UnknownGameParamError, check_game, default_game
from arena.live import LADDER
from arena.web.scopes import ALL
from arena.people import PEOPLE

routes = web.RouteTableDef()


def _status(request: web.Request) -> MatchStatus | None:
    raw = request.query.get("status")
    if raw is None:
        return None
    try:
        return MatchStatus(raw)
    except ValueError:
        allowed = ", ".join(s.value for s in MatchStatus)
        raise ApiError(400, f"query parameter 'status' must be one of {allowed}; "
                            f"got {raw[:40]!r}") from None


def _optional_name(request: web.Request, key: str, what: str) -> str | None:
    raw = request.query.get(key)
    return None if raw is None else check_name(raw, what)


def server_game(request: web.Request) -> str:
    """The game a view shows when the visitor names none."""
    return default_game(request.app[SETTINGS].server_info)


def game_param(request: web.Request, default: str | None = None) -> str:
    """``?game=`` (400 if it names no game served), else ``default``, else
    the server's default game."""
    try:
        return check_game(request.query.get("game"), default or server_game(request))
    except UnknownGameParamError as err:
        raise ApiError(400, str(err)) from None


def optional_game(request: web.Request) -> str | None:
    """``?game=`` as a filter: None when absent."""
    return game_param(request) if request.query.get("game") else None


@routes.get("/api")
async def index(request: web.Request) -> web.Response:
    return web.json_response({"api": 1, "documentation": "/docs/api", "endpoints": sorted(
        {r.resource.canonical for r in request.app.router.routes()
         if r.resource is not None and r.resource.canonical.startswith("/api")})})


def store_health(app: web.Application) -> dict[str, Any]:
    """The web's own view of the store, joined with the server's writer's
    (``healthy`` / ``last_error``) where the writer reports them."""
    own = app[HEALTH]
    writer = app.get(WRITER)
    healthy = own.healthy and bool(getattr(writer, "healthy", True))
    last_error = own.last_error or getattr(writer, "last_error", None)
    return {"healthy": healthy, "last_error": None if healthy else last_error}


# How long /api/health waits for the store to answer a read before it
# reports the store as failing (a database server that is down or hung).
STORE_PROBE_S = 5.0


async def probe_store(request: web.Request) -> str | None:
    """None if the store answers a read now, else why not. Without it a
    node that wrote nothing during a database outage said "ok"."""
    q = request.app[QUERIES]
    try:
        async with asyncio.timeout(STORE_PROBE_S):
            await q.run(q.store.schema_version)
    except TimeoutError:
        return f"the store did not answer a read within {STORE_PROBE_S:g} s"
    except (StorageError, OSError) as exc:
        return f"the store cannot be read: {exc}"
    return None


@routes.get("/api/health")
async def health(request: web.Request) -> web.Response:
    hub = request.app[HUB]
    settings = request.app[SETTINGS]
    store = store_health(request.app)
    unreadable = await probe_store(request)
    if unreadable is not None:
        store = {"healthy": False, "last_error": unreadable}
    store["node"] = getattr(request.app[QUERIES].store, "node", None)
    return web.json_response({
        "status": "ok" if store["healthy"] else "store_failing", "time": time.time(),
        "server": settings.server_info, "registration": settings.registration.value,
        "registration_open": settings.registration is RegistrationMode.OPEN,
        "store": store,
        "live_matches": len(hub.live_matches()), "live_viewers": hub.subscriber_count,
        "compiled": bool(arena.pure.compiled_modules()),
        "collector": WATCH.snapshot(),
        "metrics": request.app[METRICS].snapshot(),
        **_hosting_health(request)}, status=200 if store["healthy"] else 503)


def _hosting_health(request: web.Request) -> dict[str, Any]:
    """Whether hosted bots are bounded by cgroups (all of them together on
    CPU), or by rlimits alone, and why."""
    from arena.web.hosting_state import HOSTING

    if request.app.get(HOSTING) is None:
        return {}
    from arena.hosting.cgroups import current_state

    state = current_state()
    return {"hosting": {"cgroups": state.kind.value, "hosted_cpus": state.hosted_cpus,
                        "cgroups_missing": state.reason}}


@routes.get("/metrics")
async def metrics(request: web.Request) -> web.Response:
    node = getattr(request.app[QUERIES].store, "node", None)
    return web.Response(text=request.app[METRICS].render_prometheus(node),
                        content_type="text/plain", charset="utf-8",
                        headers={"X-Prometheus-Format": "0.0.4"})


# -- standings ---------------------------------------------------------------
async def _standings_response(request: web.Request, scope: str, game: str) -> web.Response:
    limit, offset = pagination(request)
    rows = await request.app[QUERIES].standings_async(scope, game)
    return web.json_response({"scope": scope, "game": game,
                              **page_of("standings", rows, limit, offset)})


def _scope(request: web.Request) -> str:
    scope = request.query.get("scope", LADDER)
    if scope not in (LADDER, ALL):
        check_name(scope, "scope (ladder, all, people or a tournament id)")
    return scope


async def _scope_game(request: web.Request, scope: str) -> str:
    """The game of a standings view: a tournament's own game, else ``?game=``."""
    if scope in (LADDER, ALL, PEOPLE):
        return game_param(request)
    q = request.app[QUERIES]
    return game_param(request, (await q.run(q.get_tournament, scope))["game"])


@routes.get("/api/standings")
async def standings(request: web.Request) -> web.Response:
    scope = _scope(request)
    return await _standings_response(request, scope, await _scope_game(request, scope))


async def _game_listing(request: web.Request, key: str,
                        lister: Callable[[int, int, str | None], tuple[list[Any], int]]
                        ) -> web.Response:
    """A page of a listing the ``?game=`` parameter may narrow (tournaments, bots)."""
    limit, offset = pagination(request)
    items, total = await request.app[QUERIES].run(lister, limit, offset,
                                                  optional_game(request))
    return web.json_response(page(key, items, total, limit, offset))


# -- tournaments ----------------------------------------------------------------
@routes.get("/api/tournaments")
async def tournaments(request: web.Request) -> web.Response:
    return await _game_listing(request, "tournaments", request.app[QUERIES].list_tournaments)


@routes.get("/api/tournaments/{id}")
async def tournament(request: web.Request) -> web.Response:
    q = request.app[QUERIES]
    tid = check_name(request.match_info["id"], "tournament id")
    internal = await viewer_is_admin(request)
    return web.json_response({"tournament": await q.run(q.get_tournament, tid,
                                                        internal=internal)})


@routes.get("/api/tournaments/{id}/standings")
async def tournament_standings(request: web.Request) -> web.Response:
    tid = check_name(request.match_info["id"], "tournament id")
    return await _standings_response(request, tid, await _scope_game(request, tid))


def _schedule_page(store: Any, tid: str, limit: int, offset: int) -> dict[str, Any]:
    store.get_tournament(tid)
    slots = store.get_schedule(tid)
    # No seed: it fixes the decks of slots not yet played.
    items = [{"slot": s.slot, "players": s.players, "match_id": s.match_id,
              "attempts": s.attempts,
              **{k: s.extra[k] for k in ("round", "set") if k in s.extra}}
             for s in slots[offset:offset + limit]]
    return page("slots", items, len(slots), limit, offset)


@routes.get("/api/tournaments/{id}/schedule")
async def tournament_schedule(request: web.Request) -> web.Response:
    limit, offset = pagination(request)
    tid = check_name(request.match_info["id"], "tournament id")
    q = request.app[QUERIES]
    return web.json_response(await q.run(_schedule_page, q.store, tid, limit, offset))


# -- matches ------------------------------------------------------------------------
@routes.get("/api/matches")
async def matches(request: web.Request) -> web.Response:
    limit, offset = pagination(request)
    q = request.app[QUERIES]
    items, total = await q.run(
        q.list_matches, bot=_optional_name(request, "bot", "bot name"),
        tournament_id=_optional_name(request, "tournament", "tournament id"),
        status=_status(request), limit=limit, offset=offset, game=optional_game(request))
    return web.json_response(page("matches", items, total, limit, offset))


@routes.get("/api/matches/live")
async def live_matches(request: web.Request) -> web.Response:
    limit, offset = pagination(request)
    # "events" in the hub's record is a count, not a list: say so in its name.
    items = [{**{k: v for k, v in m.items() if k != "events"}, "events_count": m.get("events")}
             for m in request.app[QUERIES].live_matches()]
    return web.json_response(page_of("matches", items, limit, offset))


async def _detail(request: web.Request) -> dict[str, Any]:
    match_id = check_name(request.match_info["id"], "match id")
    internal = await viewer_is_admin(request)
    return await request.app[QUERIES].match_detail_async(match_id, internal=internal)


@routes.get("/api/matches/{id}")
async def match(request: web.Request) -> web.Response:
    return web.json_response(await _detail(request))


@routes.get("/api/matches/{id}/events")
async def match_events(request: web.Request) -> web.Response:
    limit = int_param(request, "limit", 1000, lo=1, hi=10_000)
    offset = int_param(request, "offset", 0, lo=0, hi=MAX_OFFSET)
    detail = await _detail(request)
    events = detail["events"]
    return web.json_response({"live": detail["live"], "embargoed": detail["embargoed"],
                              **page_of("events", events, limit, offset)})


# -- bots ----------------------------------------------------------------------------
@routes.get("/api/bots")
async def bots(request: web.Request) -> web.Response:
    return await _game_listing(request, "bots", request.app[QUERIES].list_bots)


@routes.get("/api/bots/{name}")
async def bot(request: web.Request) -> web.Response:
    scope = _scope(request)
    recent = int_param(request, "recent", 20, lo=0, hi=200)
    name = check_name(request.match_info["name"], "bot name")
    q = request.app[QUERIES]
    await q.run(q.entrant_bot, name)  # 404 before any standings are computed
    await q.prepare(scope)
    games = q.bot_games(name, scope)
    default = server_game(request)
    if games and default not in games:
        default = games[0]  # the figures of a game it played
    game = game_param(request, default)
    stats = await q.bot_stats_async(name, scope, recent, game)
    return web.json_response({**stats, "games": games})
