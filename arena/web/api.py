"""Read-only JSON API: standings, tournaments, matches, bots, health.

Field names are documented in ``API.md`` next to this file and are stable.
"""

from __future__ import annotations

import time

from aiohttp import web

from arena.storage.base import MatchStatus
from arena.web.errors import ApiError, check_name, int_param, page, pagination
from arena.web.keys import HUB, METRICS, QUERIES, SETTINGS
from arena.web.live import LADDER
from arena.web.queries import ALL

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
                            f"got {raw!r}") from None


def _optional_name(request: web.Request, key: str, what: str) -> str | None:
    raw = request.query.get(key)
    return None if raw is None else check_name(raw, what)


@routes.get("/api")
async def index(request: web.Request) -> web.Response:
    return web.json_response({"api": 1, "documentation": "/docs/api", "endpoints": sorted(
        {r.resource.canonical for r in request.app.router.routes()
         if r.resource is not None and r.resource.canonical.startswith("/api")})})


@routes.get("/api/health")
async def health(request: web.Request) -> web.Response:
    hub = request.app[HUB]
    return web.json_response({
        "status": "ok", "time": time.time(), "server": request.app[SETTINGS].server_info,
        "registration_open": request.app[SETTINGS].registration_open,
        "live_matches": len(hub.live_matches()), "live_viewers": hub.subscriber_count,
        "metrics": request.app[METRICS].snapshot()})


@routes.get("/metrics")
async def metrics(request: web.Request) -> web.Response:
    return web.Response(text=request.app[METRICS].render_prometheus(),
                        content_type="text/plain", charset="utf-8",
                        headers={"X-Prometheus-Format": "0.0.4"})


# -- standings ---------------------------------------------------------------
def _standings_response(request: web.Request, scope: str) -> web.Response:
    limit, offset = pagination(request)
    rows = request.app[QUERIES].standings(scope)
    body = page("standings", rows[offset:offset + limit], len(rows), limit, offset)
    return web.json_response({"scope": scope, **body})


@routes.get("/api/standings")
async def standings(request: web.Request) -> web.Response:
    scope = request.query.get("scope", LADDER)
    if scope not in (LADDER, ALL):
        check_name(scope, "scope (ladder, all or a tournament id)")
    return _standings_response(request, scope)


# -- tournaments ----------------------------------------------------------------
@routes.get("/api/tournaments")
async def tournaments(request: web.Request) -> web.Response:
    limit, offset = pagination(request)
    items, total = request.app[QUERIES].list_tournaments(limit, offset)
    return web.json_response(page("tournaments", items, total, limit, offset))


@routes.get("/api/tournaments/{id}")
async def tournament(request: web.Request) -> web.Response:
    return web.json_response({"tournament": request.app[QUERIES].get_tournament(
        request.match_info["id"])})


@routes.get("/api/tournaments/{id}/standings")
async def tournament_standings(request: web.Request) -> web.Response:
    return _standings_response(request, request.match_info["id"])


@routes.get("/api/tournaments/{id}/schedule")
async def tournament_schedule(request: web.Request) -> web.Response:
    limit, offset = pagination(request)
    tid = request.match_info["id"]
    store = request.app[QUERIES].store
    store.get_tournament(tid)
    slots = store.get_schedule(tid)
    # No seed: it fixes the decks of slots not yet played.
    items = [{"slot": s.slot, "players": s.players, "match_id": s.match_id,
              "attempts": s.attempts} for s in slots[offset:offset + limit]]
    return web.json_response(page("slots", items, len(slots), limit, offset))


# -- matches ------------------------------------------------------------------------
@routes.get("/api/matches")
async def matches(request: web.Request) -> web.Response:
    limit, offset = pagination(request)
    items, total = request.app[QUERIES].list_matches(
        bot=_optional_name(request, "bot", "bot name"),
        tournament_id=_optional_name(request, "tournament", "tournament id"),
        status=_status(request), limit=limit, offset=offset)
    return web.json_response(page("matches", items, total, limit, offset))


@routes.get("/api/matches/live")
async def live_matches(request: web.Request) -> web.Response:
    limit, offset = pagination(request)
    # "events" in the hub's record is a count, not a list: say so in its name.
    items = [{**{k: v for k, v in m.items() if k != "events"}, "events_count": m.get("events")}
             for m in request.app[QUERIES].live_matches()]
    return web.json_response(page("matches", items[offset:offset + limit], len(items),
                                  limit, offset))


@routes.get("/api/matches/{id}")
async def match(request: web.Request) -> web.Response:
    return web.json_response(request.app[QUERIES].match_detail(request.match_info["id"]))


@routes.get("/api/matches/{id}/events")
async def match_events(request: web.Request) -> web.Response:
    limit = int_param(request, "limit", 1000, lo=1, hi=10_000)
    offset = int_param(request, "offset", 0, lo=0)
    detail = request.app[QUERIES].match_detail(request.match_info["id"])
    events = detail["events"]
    return web.json_response({"live": detail["live"], "embargoed": detail["embargoed"],
                              **page("events", events[offset:offset + limit], len(events),
                                     limit, offset)})


# -- bots ----------------------------------------------------------------------------
@routes.get("/api/bots")
async def bots(request: web.Request) -> web.Response:
    limit, offset = pagination(request)
    items, total = request.app[QUERIES].list_bots(limit, offset)
    return web.json_response(page("bots", items, total, limit, offset))


@routes.get("/api/bots/{name}")
async def bot(request: web.Request) -> web.Response:
    scope = request.query.get("scope", LADDER)
    if scope not in (LADDER, ALL):
        check_name(scope, "scope (ladder, all or a tournament id)")
    recent = int_param(request, "recent", 20, lo=0, hi=200)
    return web.json_response(request.app[QUERIES].bot_stats(
        request.match_info["name"], scope, recent))
