"""Matches as data over HTTP: a match's notation, and the open dataset.

Both serve only what the match page would show in full (arena.dataset
reads through :meth:`Queries.match_detail`): a running, embargoed or
aborted match is never in them.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from aiohttp import web

from arena.dataset import SCHEMA, NotPublicError, Selection, match_record, notation_of, scan
from arena.storage.base import NotFoundError
from arena.web.errors import MAX_OFFSET, ApiError, check_name, int_param
from arena.web.keys import QUERIES

routes = web.RouteTableDef()
SCAN_PER_RECORD = 20  # store rows a dataset page may look at per record it returns


@routes.get("/api/matches/{id}/notation")
async def match_notation(request: web.Request) -> web.Response:
    match_id = check_name(request.match_info["id"], "match id")
    q = request.app[QUERIES]
    detail = await q.match_detail_async(match_id)
    try:
        text = await q.run(notation_of, detail)
    except NotPublicError as exc:
        raise ApiError(409, str(exc)) from None
    return web.Response(text=text, content_type="text/plain", charset="utf-8",
                        headers={"Content-Disposition": f'inline; filename="{match_id}.txt"'})


def _date(request: web.Request, name: str) -> float | None:
    text = request.query.get(name)
    if text is None:
        return None
    try:
        at = datetime.fromisoformat(text)
    except ValueError:
        raise ApiError(400, f"{name}={text!r} is not a date (YYYY-MM-DD or an ISO time)") from None
    return (at if at.tzinfo else at.replace(tzinfo=timezone.utc)).timestamp()


def _page(q: Any, selection: Selection, cursor: int, limit: int) -> dict[str, Any]:
    records: list[dict[str, Any]] = []
    budget = limit * SCAN_PER_RECORD
    next_cursor: int | None = None
    for position, m in scan(q.store, selection, start=cursor, page=min(budget, 500)):
        if len(records) >= limit or position - cursor >= budget:
            next_cursor = position
            break
        try:
            records.append(match_record(q.match_detail(m.id)))
        except (NotPublicError, NotFoundError):
            continue
    return {"schema": SCHEMA, "records": records, "next": next_cursor}


@routes.get("/api/dataset")
async def dataset(request: web.Request) -> web.Response:
    game = request.query.get("game")
    tournament = request.query.get("tournament")
    selection = Selection(game=check_name(game, "game") if game else None,
                          tournament_id=check_name(tournament, "tournament") if tournament
                          else None,
                          after=_date(request, "after"), before=_date(request, "before"))
    limit = int_param(request, "limit", 20, lo=1, hi=100)
    cursor = int_param(request, "cursor", 0, lo=0, hi=MAX_OFFSET)
    q = request.app[QUERIES]
    return web.json_response(await q.run(_page, q, selection, cursor, limit))
