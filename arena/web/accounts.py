"""Writes over HTTP: bot registration and tokens, admin actions.

Tokens travel as ``Authorization: Bearer <token>``. A bot's token is shown
once, at registration or rotation; the store keeps only its hash.

Status codes: 401 when credentials are missing or match nothing, 403 when
they are valid but not enough (another bot's token, a bot token on an admin
action, or admin actions disabled because the server has no admin token).
"""

from __future__ import annotations

import hmac
import secrets
import time
import tomllib
from typing import Any

import structlog
from aiohttp import web

from arena.auth import hash_token, new_token, token_matches
from arena.storage.base import AlreadyExistsError, BotRecord, TournamentRecord, TournamentStatus
from arena.tournament.config import ConfigError, parse_config
from arena.web.errors import ApiError, check_name, page, pagination
from arena.web.keys import QUERIES, SETTINGS, STORE
from arena.web.queries import bot_wire

log = structlog.get_logger(__name__)
routes = web.RouteTableDef()

MAX_BOTS = 10_000  # registrations beyond this are refused
_CHALLENGE = {"WWW-Authenticate": 'Bearer realm="arena"'}


def _bearer(request: web.Request) -> str | None:
    header = request.headers.get("Authorization")
    if header is None:
        return None
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise ApiError(401, "the Authorization header must be 'Bearer <token>'",
                       headers=_CHALLENGE)
    return token.strip()


def _is_admin(request: web.Request, token: str | None) -> bool:
    admin = request.app[SETTINGS].admin_token
    return token is not None and admin is not None and hmac.compare_digest(
        token.encode(), admin.encode())


def require_admin(request: web.Request) -> None:
    token = _bearer(request)
    if request.app[SETTINGS].admin_token is None:
        raise ApiError(403, "admin actions are disabled: the server runs without an "
                            "admin token")
    if token is None:
        raise ApiError(401, "this action needs the admin token as 'Authorization: "
                            "Bearer <token>'", headers=_CHALLENGE)
    if _is_admin(request, token):
        return
    if request.app[STORE].find_bot_by_token_hash(hash_token(token)) is not None:
        raise ApiError(403, "a bot token cannot do admin actions")
    raise ApiError(401, "invalid admin token", headers=_CHALLENGE)


def require_bot_or_admin(request: web.Request, bot: BotRecord) -> None:
    """The request carries ``bot``'s current token, or the admin token."""
    token = _bearer(request)
    if token is None:
        raise ApiError(401, f"send the token of bot {bot.name!r} as 'Authorization: Bearer "
                            "<token>'", headers=_CHALLENGE)
    if _is_admin(request, token):
        return
    if not bot.removed and bot.token_hash is not None and token_matches(token, bot.token_hash):
        return
    other = request.app[STORE].find_bot_by_token_hash(hash_token(token))
    if other is not None and other.name != bot.name:
        raise ApiError(403, f"that token belongs to another bot, not {bot.name!r}")
    raise ApiError(401, f"invalid token for bot {bot.name!r}", headers=_CHALLENGE)


async def _json_object(request: web.Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except ValueError:
        raise ApiError(400, "the request body must be a JSON object") from None
    if not isinstance(body, dict):
        raise ApiError(400, "the request body must be a JSON object")
    return body


@routes.post("/api/bots")
async def register(request: web.Request) -> web.Response:
    body = await _json_object(request)
    settings = request.app[SETTINGS]
    if not settings.registration_open and not _is_admin(request, _bearer(request)):
        raise ApiError(403, "registration is closed on this server; ask its admin")
    name = check_name(body.get("name"))
    owner = body.get("owner")
    if owner is not None and (not isinstance(owner, str) or len(owner) > 100):
        raise ApiError(400, "owner must be a string of at most 100 characters")
    store = request.app[STORE]
    if len(store.list_bots()) >= MAX_BOTS:
        raise ApiError(403, f"this server holds its maximum of {MAX_BOTS} bots")
    token = new_token()
    try:
        bot = store.add_bot(name, hash_token(token), owner=owner)
    except AlreadyExistsError:
        raise ApiError(409, f"the name {name!r} is taken; pick another") from None
    log.info("bot_registered", bot=name)
    return web.json_response(
        {"bot": bot_wire(bot), "token": token,
         "note": "keep this token: it is shown only once; rotate it with "
                 f"POST /api/bots/{name}/token"},
        status=201, headers={"Location": f"/api/bots/{name}"})


@routes.post("/api/bots/{name}/token")
async def rotate(request: web.Request) -> web.Response:
    bot = request.app[QUERIES].get_bot(request.match_info["name"])
    require_bot_or_admin(request, bot)
    if bot.removed:
        raise ApiError(410, f"bot {bot.name!r} was removed")
    token = new_token()
    request.app[STORE].set_token_hash(bot.name, hash_token(token))
    log.info("bot_token_rotated", bot=bot.name)
    return web.json_response({"bot": bot_wire(bot), "token": token})


@routes.get("/api/bots/{name}/faults")
async def faults(request: web.Request) -> web.Response:
    bot = request.app[QUERIES].get_bot(request.match_info["name"])
    require_bot_or_admin(request, bot)
    limit, offset = pagination(request)
    items, total = request.app[QUERIES].bot_faults(bot.name, limit, offset)
    return web.json_response({"bot": bot.name, **page("matches", items, total, limit, offset)})


@routes.delete("/api/bots/{name}")
async def remove(request: web.Request) -> web.Response:
    require_admin(request)
    name = request.match_info["name"]
    store = request.app[STORE]
    if request.app[QUERIES].get_bot(name).removed:  # NotFoundError -> 404
        raise ApiError(410, f"bot {name!r} was removed already")
    store.remove_bot(name)
    log.info("bot_removed", bot=name)
    return web.json_response({"bot": bot_wire(request.app[QUERIES].get_bot(name))})


@routes.post("/api/tournaments")
async def create_tournament(request: web.Request) -> web.Response:
    """Store a tournament as ``pending``; the runner schedules and plays it.

    The body is a tournament file: TOML (``Content-Type: application/toml``)
    or the same document as a JSON object. ``?id=`` picks the id.
    """
    require_admin(request)
    doc = await _config_document(request)
    try:
        config = parse_config(doc)
    except ConfigError as e:
        raise ApiError(400, f"invalid tournament config: {e}") from None
    local = [x.name for x in config.entrants if x.local]
    if local:
        # Starting programs on this machine is for tournament files the
        # operator runs locally, not for anything that arrives over HTTP.
        raise ApiError(400, "entrants with a 'command' cannot be created over HTTP "
                            f"({', '.join(local)}); use remote = true (registered bots)")
    tid = request.query.get("id")
    tid = check_name(tid, "tournament id") if tid is not None else _new_id(config.name)
    record = TournamentRecord(id=tid, name=config.name, game=config.game,
                              config=config.to_wire(), status=TournamentStatus.PENDING,
                              created_at=time.time())
    try:
        request.app[STORE].create_tournament(record, [])
    except AlreadyExistsError:
        raise ApiError(409, f"a tournament with id {tid!r} exists already") from None
    log.info("tournament_created", tournament=tid)
    return web.json_response({"tournament": request.app[QUERIES].get_tournament(tid)},
                             status=201, headers={"Location": f"/api/tournaments/{tid}"})


async def _config_document(request: web.Request) -> dict[str, Any]:
    if request.content_type in ("application/toml", "text/toml", "text/plain"):
        try:
            return tomllib.loads(await request.text())
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
            raise ApiError(400, f"the body is not valid TOML: {e}") from None
    return await _json_object(request)


def _new_id(name: str) -> str:
    slug = "".join(c if c.isascii() and c.isalnum() else "-" for c in name.lower())
    slug = "-".join(part for part in slug.split("-") if part)[:20] or "t"
    return f"{slug}-{secrets.token_hex(3)}"
