"""A person at the table over HTTP: names, tokens, a seat, its messages.

* ``POST /api/people`` ``{"name"}``: a person's name and token (shown once,
  kept by the page in the browser). The bots' registration mode and rate
  limit apply, and people and bots share one namespace: a name is taken
  whoever took it.
* ``GET /api/people/me``: whose token this is.
* ``GET /api/play/{game}/choices``: what a person may choose for a table:
  the house strategies (weakest first) and the bots waiting in the lobby
  whose hello opted in to playing people.
* ``POST /api/play/{game}`` ``{"opponents", "house", "bots"}`` (all
  optional, see ``arena.people.choice``): the person's table of ``game``,
  a new one with the bots chosen or the one they are playing (the page
  that asks takes the seat back from autopilot: a reload).
* ``GET /api/play/{match}/messages?after=N``: the seat's messages numbered
  above N, the same a bot in the seat reads (``match_start``, events in
  the seat's view, ``request``, ``error``, ``match_end``); waits up to
  :data:`POLL_S` for one when there is none. Reading keeps the seat
  attended.
* ``POST /api/play/{match}/action`` ``{"request_id", "action"}``: the
  person's answer, checked by the match like a bot's.
* ``POST /api/play/{match}/leave``: the page is closing (``sendBeacon``,
  which cannot set headers: the token may come in the body); autopilot
  plays the seat until a page comes back.

Every call but the first carries the person's token as
``Authorization: Bearer <token>``.
"""

from __future__ import annotations

import hmac
from typing import Any, Final

import structlog
from aiohttp import web

from arena.auth import hash_token, new_token
from arena.games import game_names, get_game
from arena.people.choice import ChoiceError, TableChoice
from arena.people.tables import PeopleTableError, PeopleTables, PersonTable
from arena.storage.base import PERSON_KIND, AlreadyExistsError, BotRecord, Store
from arena.web.accounts import _auth_failed, _bearer, _json_object, _may_register, store_write
from arena.web.errors import ApiError, check_bot_name
from arena.web.keys import QUERIES, REGISTRATIONS, SETTINGS, STORE, RegistrationMode

log = structlog.get_logger(__name__)
routes = web.RouteTableDef()

PEOPLE_TABLES: Final = web.AppKey("people_tables", PeopleTables)
POLL_S: Final = 15.0  # a read waits this long for a message before answering empty
PERSON: Final = PERSON_KIND  # the kind of a person's record among the bots'
MAX_PEOPLE: Final = 100_000


def setup(app: web.Application, people: PeopleTables) -> None:
    app[PEOPLE_TABLES] = people
    app.router.add_routes(routes)


# -- who ----------------------------------------------------------------------------
def _add_person(store: Store, name: str, token_hash: str) -> BotRecord:
    """(the write thread) Counted and added in one place."""
    if sum(1 for b in store.list_bots() if b.kind == PERSON) >= MAX_PEOPLE:
        raise ApiError(403, f"this server holds its maximum of {MAX_PEOPLE} people")
    return store.add_bot(name, token_hash, kind=PERSON)


async def _person(request: web.Request, token: str | None = None) -> BotRecord:
    """The person whose token the request carries (401 if none)."""
    token = token if token is not None else _bearer(request)
    if token is None:
        raise ApiError(401, "send your person token as 'Authorization: Bearer <token>' "
                            "(the play page keeps it in the browser)")
    q = request.app[QUERIES]
    record = await q.run(request.app[STORE].find_bot_by_token_hash, hash_token(token))
    if record is None or record.removed or record.kind != PERSON:
        raise _auth_failed(request, "this token is no person's: pick a name on the play page")
    return record


def _held(request: web.Request, token: str | None = None) -> tuple[PersonTable, str]:
    """The table in the path and the request's token hash, which must be its
    person's (checked without the store: the table knows the hash)."""
    held = request.app[PEOPLE_TABLES].get(request.match_info["match"][:64])
    if held is None:
        raise ApiError(404, "no person's table with this id is open here")
    token = token if token is not None else _bearer(request)
    if token is None:
        raise ApiError(401, "send your person token as 'Authorization: Bearer <token>'")
    token_hash = hash_token(token)
    if not hmac.compare_digest(token_hash, held.token_hash):
        raise _auth_failed(request, "this token is not the person's who sits at this table")
    return held, token_hash


@routes.post("/api/people")
async def register_person(request: web.Request) -> web.Response:
    await _may_register(request)
    body = await _json_object(request)
    name = check_bot_name(body.get("name"))
    if request.app[SETTINGS].registration is RegistrationMode.OPEN:
        request.app[REGISTRATIONS].take(request.remote or "unknown")
    token = new_token()
    try:
        await store_write(request, _add_person, request.app[STORE], name, hash_token(token))
    except AlreadyExistsError:
        raise ApiError(409, f"the name {name!r} is taken (by a person or a bot); pick "
                            "another") from None
    log.info("person_registered", person=name)
    return web.json_response({"name": name, "token": token,
                              "note": "the play page keeps this token in the browser; "
                                      "keep a copy to play from another browser"},
                             status=201)


@routes.get("/api/people/me")
async def who_am_i(request: web.Request) -> web.Response:
    record = await _person(request)
    return web.json_response({"name": record.name})


# -- the table ---------------------------------------------------------------------
def _game(request: web.Request) -> str:
    game = request.match_info["game"]
    if game not in game_names():
        raise ApiError(404, f"no game {game[:40]!r} here; play one of {', '.join(game_names())}")
    return game


@routes.get("/api/play/{game}/choices")
async def choices(request: web.Request) -> web.Response:
    return web.json_response(request.app[PEOPLE_TABLES].choices(_game(request)))


@routes.post("/api/play/{game}")
async def sit(request: web.Request) -> web.Response:
    record = await _person(request)
    game = _game(request)
    body = await _json_object(request) if request.body_exists else None
    try:
        choice = TableChoice.from_wire(body, get_game(game))
    except ChoiceError as exc:
        raise ApiError(400, str(exc)) from None
    assert record.token_hash is not None
    try:
        held = request.app[PEOPLE_TABLES].sit(game, record.name, record.token_hash, choice)
    except PeopleTableError as exc:
        raise ApiError(409, str(exc)) from None
    return web.json_response(held.wire())


@routes.get("/api/play/{match}/messages")
async def messages(request: web.Request) -> web.Response:
    held, _ = _held(request)
    raw = request.query.get("after", "-1")
    try:
        after = int(raw)
    except ValueError:
        raise ApiError(400, f"after must be a message number, got {raw[:20]!r}") from None
    link = held.link
    loop_time = request.app[PEOPLE_TABLES].now
    found, last = link.messages_after(after, loop_time())
    if not found and not link.closed and not held.over:
        await link.wait(after, POLL_S)
        found, last = link.messages_after(after, loop_time())
    return web.json_response({"messages": found, "last": last, "over": held.over,
                              "attached": not link.closed})


@routes.post("/api/play/{match}/action")
async def act(request: web.Request) -> web.Response:
    held, _ = _held(request)
    body = await _json_object(request, max_depth=6)
    request_id = body.get("request_id")
    if not isinstance(request_id, int) or isinstance(request_id, bool):
        raise ApiError(400, "request_id must be the id of the request you answer")
    if "action" not in body:
        raise ApiError(400, "action is missing: one of the request's legal actions")
    if held.link.closed:
        raise ApiError(409, "this page no longer holds the seat (another page took it, or it "
                            "was away too long); reload the page to take it back")
    held.link.answer(request_id, body["action"])
    return web.json_response({"sent": True})


@routes.post("/api/play/{match}/leave")
async def leave(request: web.Request) -> web.Response:
    token: str | None = None
    if "Authorization" not in request.headers:
        body: Any = await request.text()
        token = body.strip()[:200] or None
    held, _ = _held(request, token)
    held.link.leave()
    return web.json_response({"left": True})
