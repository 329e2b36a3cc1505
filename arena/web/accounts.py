"""Writes over HTTP: bot registration and tokens, admin actions.

Tokens travel as ``Authorization: Bearer <token>``. A bot's token is shown
once, at registration or rotation; the store keeps only its hash.

Status codes: 401 when credentials are missing or match nothing, 403 when
they are valid but not enough (another bot's token, a bot token on an admin
action, admin actions disabled because the server has no admin token, or
registration closed), 429 with ``Retry-After`` when an address registers
too fast or sent too many wrong tokens (then even a right one waits), 503
when the store refuses the write.

Registration (``POST /api/bots``) follows the server's
:class:`~arena.web.keys.RegistrationMode`.
"""

from __future__ import annotations

import asyncio
import hmac
import secrets
import sqlite3
import time
import tomllib
from collections.abc import Callable
from typing import Any, TypeVar

import structlog
from aiohttp import web

from arena.auth import hash_token, new_token, token_matches
from arena.server.revoke import REMOVED, REPLACED
from arena.storage.base import (
    AlreadyExistsError,
    BotRecord,
    NotFoundError,
    StorageError,
    Store,
    TournamentRecord,
    TournamentStatus,
)
from arena.storage.deal_keys import DealKeyring
from arena.tournament.challenge import CHALLENGE_PREFIX, is_challenge_id
from arena.tournament.config import ConfigError, parse_config
from arena.tournament.runner import deals_wire
from arena.web.errors import (
    STORE_FAILING,
    ApiError,
    check_bot_name,
    check_depth,
    check_name,
    page,
    pagination,
)
from arena.web.keys import (
    AUTH_FAILURES,
    DISCONNECTS,
    HEALTH,
    QUERIES,
    REGISTRATIONS,
    SETTINGS,
    STORE,
    WRITER,
    RegistrationMode,
)
from arena.web.hosting_state import HOSTING
from arena.web.limits import retry_after_header
from arena.web.queries import bot_wire

log = structlog.get_logger(__name__)
routes = web.RouteTableDef()
T = TypeVar("T")

MAX_BOTS = 10_000  # registrations beyond this are refused
MAX_DOCUMENT_DEPTH = 16  # a tournament file is a few tables deep
MAX_BODY_DEPTH = 4
_CHALLENGE = {"WWW-Authenticate": 'Bearer realm="arena"'}
_ADD_BOT_BY = "the operator registers bots with 'arena bots add NAME'"


# -- credentials ------------------------------------------------------------------
def _address(request: web.Request) -> str:
    return request.remote or "unknown"


def _check_not_locked_out(request: web.Request) -> None:
    wait = request.app[AUTH_FAILURES].retry_after(_address(request))
    if wait is not None:
        raise ApiError(429, "too many wrong tokens from this address; wait before trying "
                            "again", headers=retry_after_header(wait))


def _auth_failed(request: web.Request, message: str) -> ApiError:
    """Count a wrong or malformed credential against the address."""
    request.app[AUTH_FAILURES].take(_address(request))
    log.info("web_auth_failed", address=_address(request), path=request.path[:100])
    return ApiError(401, message, headers=_CHALLENGE)


def _bearer(request: web.Request) -> str | None:
    header = request.headers.get("Authorization")
    if header is None:
        return None
    _check_not_locked_out(request)
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise _auth_failed(request, "the Authorization header must be 'Bearer <token>'")
    return token.strip()


def _is_admin(request: web.Request, token: str | None) -> bool:
    admin = request.app[SETTINGS].admin_token
    return token is not None and admin is not None and hmac.compare_digest(
        token.encode(), admin.encode())


async def _bot_of_token(request: web.Request, token: str) -> BotRecord | None:
    q = request.app[QUERIES]
    return await q.run(request.app[STORE].find_bot_by_token_hash, hash_token(token))


async def require_admin(request: web.Request) -> None:
    token = _bearer(request)
    if request.app[SETTINGS].admin_token is None:
        raise ApiError(403, "admin actions are disabled: the server runs without an "
                            "admin token")
    if token is None:
        raise ApiError(401, "this action needs the admin token as 'Authorization: "
                            "Bearer <token>'", headers=_CHALLENGE)
    if _is_admin(request, token):
        return
    if await _bot_of_token(request, token) is not None:
        raise ApiError(403, "a bot token cannot do admin actions")
    raise _auth_failed(request, "invalid admin token")


async def require_bot_or_admin(request: web.Request, bot: BotRecord) -> None:
    """The request carries ``bot``'s current token, or the admin token."""
    token = _bearer(request)
    if token is None:
        raise ApiError(401, f"send the token of bot {bot.name!r} as 'Authorization: Bearer "
                            "<token>'", headers=_CHALLENGE)
    if _is_admin(request, token):
        return
    if not bot.removed and bot.token_hash is not None and token_matches(token, bot.token_hash):
        return
    other = await _bot_of_token(request, token)
    if other is not None and other.name != bot.name:
        raise ApiError(403, f"that token belongs to another bot, not {bot.name!r}")
    raise _auth_failed(request, f"invalid token for bot {bot.name!r}")


async def viewer_is_admin(request: web.Request) -> bool:
    """On a public read: does the request carry the admin token? A token
    that is neither the admin's nor a bot's counts as a failed attempt (no
    free oracle for guessing the admin token); public reads need none."""
    header = request.headers.get("Authorization", "")
    if not header[:7].lower().startswith("bearer "):
        return False  # none, or another scheme (a proxy's Basic): a plain visitor
    token = _bearer(request)
    if _is_admin(request, token):
        return True
    if token is not None and await _bot_of_token(request, token) is None:
        request.app[AUTH_FAILURES].take(_address(request))
    return False


# -- writes --------------------------------------------------------------------------
async def store_write(request: web.Request, fn: Callable[..., T], *args: Any,
                      **kwargs: Any) -> T:
    """Run a store write off the loop (on the server's writer thread when
    there is one); a store that refuses it gives 503 and marks /api/health."""
    health = request.app[HEALTH]
    writer = request.app.get(WRITER)
    try:
        if writer is not None:
            result = await writer.call(fn, *args, **kwargs)
        else:
            result = await asyncio.to_thread(fn, *args, **kwargs)
    except (AlreadyExistsError, NotFoundError):
        health.ok()  # the store answered; the request was wrong
        raise
    except (StorageError, sqlite3.Error, OSError) as exc:
        health.failed(exc)
        raise ApiError(503, STORE_FAILING, headers={"Retry-After": "5"}) from None
    health.ok()
    return result


async def _json_object(request: web.Request, *, max_depth: int = MAX_BODY_DEPTH
                       ) -> dict[str, Any]:
    try:
        body = await request.json()
    except RecursionError:
        raise ApiError(400, f"the request body is nested too deeply (at most {max_depth} "
                            "levels)") from None
    except ValueError:
        raise ApiError(400, "the request body must be a JSON object") from None
    if not isinstance(body, dict):
        raise ApiError(400, "the request body must be a JSON object")
    check_depth(body, max_depth, "the request body")
    return body


def _add_bot(store: Store, name: str, token_hash: str, owner: str | None) -> BotRecord:
    """(the write thread) Counted and added in one place, off the loop."""
    if len(store.list_bots()) >= MAX_BOTS:
        raise ApiError(403, f"this server holds its maximum of {MAX_BOTS} bots")
    return store.add_bot(name, token_hash, owner=owner)


async def _may_register(request: web.Request) -> None:
    settings = request.app[SETTINGS]
    mode = settings.registration
    if mode is RegistrationMode.CLOSED:
        raise ApiError(403, f"registration over HTTP is closed on this server; {_ADD_BOT_BY}")
    if mode is RegistrationMode.ADMIN:
        if settings.admin_token is None:
            raise ApiError(403, "registration over HTTP needs the admin token and this "
                                f"server has none; {_ADD_BOT_BY}")
        await require_admin(request)
        return
    if "Authorization" in request.headers and _is_admin(request, _bearer(request)):
        return  # the admin is not rate limited
    wait = request.app[REGISTRATIONS].retry_after(_address(request))
    if wait is not None:
        raise ApiError(429, "too many registrations from this address; wait before "
                            "registering another bot", headers=retry_after_header(wait))


@routes.post("/api/bots")
async def register(request: web.Request) -> web.Response:
    await _may_register(request)
    body = await _json_object(request)
    name = check_bot_name(body.get("name"))
    owner = body.get("owner")
    if owner is not None and (not isinstance(owner, str) or len(owner) > 100):
        raise ApiError(400, "owner must be a string of at most 100 characters")
    if request.app[SETTINGS].registration is RegistrationMode.OPEN:
        request.app[REGISTRATIONS].take(_address(request))
    token = new_token()
    try:
        bot = await store_write(request, _add_bot, request.app[STORE], name,
                                hash_token(token), owner)
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
    q = request.app[QUERIES]
    bot = await q.run(q.get_bot, check_name(request.match_info["name"]))
    await require_bot_or_admin(request, bot)
    if bot.removed:
        raise ApiError(410, f"bot {bot.name!r} was removed")
    token = new_token()
    await store_write(request, request.app[STORE].set_token_hash, bot.name, hash_token(token))
    _disconnect(request, bot.name, REPLACED, keep_token=hash_token(token))
    await _retire_hosted(request, bot.name, removed=False)
    log.info("bot_token_rotated", bot=bot.name)
    return web.json_response({"bot": bot_wire(bot), "token": token})


@routes.get("/api/bots/{name}/faults")
async def faults(request: web.Request) -> web.Response:
    q = request.app[QUERIES]
    bot = await q.run(q.get_bot, check_name(request.match_info["name"]))
    await require_bot_or_admin(request, bot)
    limit, offset = pagination(request)
    internal = _is_admin(request, _bearer(request))
    items, total = await q.run(q.bot_faults, bot.name, limit, offset, internal=internal)
    return web.json_response({"bot": bot.name, **page("matches", items, total, limit, offset)})


@routes.delete("/api/bots/{name}")
async def remove(request: web.Request) -> web.Response:
    await require_admin(request)
    name = check_name(request.match_info["name"])
    q = request.app[QUERIES]
    if (await q.run(q.get_bot, name)).removed:  # NotFoundError -> 404
        raise ApiError(410, f"bot {name!r} was removed already")
    await store_write(request, request.app[STORE].remove_bot, name)
    _disconnect(request, name, REMOVED.format(bot=name))
    await _retire_hosted(request, name, removed=True)
    log.info("bot_removed", bot=name)
    q = request.app[QUERIES]
    return web.json_response({"bot": bot_wire(await q.run(q.get_bot, name))})


def _disconnect(request: web.Request, name: str, reason: str, *,
                keep_token: str | None = None) -> None:
    """Connections the bot opened before are closed before the answer (its
    token was checked at their hello only): in this process and, told over
    their channels, in its workers."""
    closed = sum(close(name, reason, keep_token) for close in request.app.get(DISCONNECTS, []))
    if closed:
        log.info("bot_connections_closed", bot=name, count=closed)


async def _retire_hosted(request: web.Request, name: str, *, removed: bool) -> None:
    """A hosted bot's code stops and its local tokens are revoked before the
    answer: nothing it started may keep playing (or start again, if removed)."""
    hosting = request.app.get(HOSTING)
    if hosting is not None:
        await hosting.versions.retire(name, removed=removed)


@routes.post("/api/tournaments")
async def create_tournament(request: web.Request) -> web.Response:
    """Store a tournament as ``pending``; the runner schedules and plays it.

    The body is a tournament file: TOML (``Content-Type: application/toml``)
    or the same document as a JSON object. ``?id=`` picks the id.
    """
    await require_admin(request)
    doc = await _config_document(request)
    check_depth(doc, MAX_DOCUMENT_DEPTH, "the tournament config")
    try:
        config = parse_config(doc)
    except ConfigError as e:
        raise ApiError(400, f"invalid tournament config: {e}") from None
    except RecursionError:
        raise ApiError(400, "the tournament config is nested too deeply") from None
    local = [x.name for x in config.entrants if x.local]
    if local:
        # Starting programs on this machine is for tournament files the
        # operator runs locally, not for anything that arrives over HTTP.
        raise ApiError(400, "entrants with a 'command' cannot be created over HTTP "
                            f"({', '.join(local)}); use remote = true (registered bots)")
    hosted = [x.name for x in config.entrants if x.hosted]
    if hosted:  # their runs start from the store's versions where 'arena tournament' runs
        raise ApiError(400, f"hosted entrants ({', '.join(hosted)}) play with 'arena "
                            "tournament FILE --db STORE', not in a tournament created over HTTP")
    tid = request.query.get("id")
    tid = check_name(tid, "tournament id") if tid is not None else _new_id(config.name)
    if is_challenge_id(tid):
        raise ApiError(400, f"tournament ids starting with {CHALLENGE_PREFIX!r} are the "
                            "challenges'; choose another id")
    # The deal key is drawn and kept now, where every node of the store
    # deals from it, and its commitment published with the record: before
    # any node plays a match of it (an existing id keeps its key: 409 below).
    store = request.app[STORE]
    key = await store_write(request, DealKeyring.for_store(store).create, tid)
    wire = {**config.to_wire(), "deals": deals_wire(key)}
    record = TournamentRecord(id=tid, name=config.name, game=config.game, config=wire,
                              status=TournamentStatus.PENDING, created_at=time.time())
    try:
        await store_write(request, request.app[STORE].create_tournament, record, [])
    except AlreadyExistsError:
        raise ApiError(409, f"a tournament with id {tid!r} exists already") from None
    log.info("tournament_created", tournament=tid)
    q = request.app[QUERIES]
    wire = await q.run(q.get_tournament, tid, internal=True)
    return web.json_response({"tournament": wire},
                             status=201, headers={"Location": f"/api/tournaments/{tid}"})


async def _config_document(request: web.Request) -> dict[str, Any]:
    if request.content_type in ("application/toml", "text/toml", "text/plain"):
        try:
            return tomllib.loads(await request.text())
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
            raise ApiError(400, f"the body is not valid TOML: {e}") from None
        except RecursionError:
            raise ApiError(400, "the body is not usable TOML: nested too deeply "
                                f"(at most {MAX_DOCUMENT_DEPTH} levels)") from None
    return await _json_object(request, max_depth=MAX_DOCUMENT_DEPTH)


def _new_id(name: str) -> str:
    slug = "".join(c if c.isascii() and c.isalnum() else "-" for c in name.lower())
    slug = "-".join(part for part in slug.split("-") if part)[:20] or "t"
    return f"{slug}-{secrets.token_hex(3)}"
