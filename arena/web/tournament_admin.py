"""The organiser's stop for a tournament: ``POST /api/tournaments/{id}/cancel``.

A tournament whose bots never come (or sit on different nodes) would
otherwise wait for ever. Cancelling needs the admin token; every node
directing the tournament sees the status at its next poll and stops
playing it (a match in play is aborted). A cancelled tournament's decks
stay sealed: a later resume could still deal them.
"""

from __future__ import annotations

import structlog
from aiohttp import web

from arena.storage.base import Store
from arena.storage.presence import TournamentOverError
from arena.web.accounts import require_admin, store_write
from arena.web.errors import ApiError, check_name
from arena.web.keys import QUERIES, STORE

log = structlog.get_logger("arena.web")
routes = web.RouteTableDef()


def _cancel(store: Store, tid: str) -> bool | str:
    """True: cancelled now; False: it was already; a string: why it cannot be
    (a refusal, not a store failure that would mark the health as failing)."""
    try:
        return store.cancel_tournament(tid)
    except TournamentOverError as exc:
        return str(exc)


@routes.post("/api/tournaments/{id}/cancel")
async def cancel(request: web.Request) -> web.Response:
    await require_admin(request)
    tid = check_name(request.match_info["id"], "tournament id")
    changed = await store_write(request, _cancel, request.app[STORE], tid)
    if isinstance(changed, str):
        raise ApiError(409, changed)
    if changed:
        log.info("tournament_cancelled_by_admin", tournament=tid)
    q = request.app[QUERIES]
    wire = await q.run(q.get_tournament, tid, internal=True)
    return web.json_response({"tournament": wire, "cancelled_now": changed})
