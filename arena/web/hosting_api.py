"""HTTP for hosted bots: upload a version, follow its build, read its logs.

``POST /api/bots/{name}/versions`` takes a multipart upload (field ``file``,
optional field ``lang``) with the bot's own token, answers ``202`` with the
new version and builds it in the background. Everybody sees a bot's versions
and their results; only its owner (its token, or the admin) sees build logs,
failure reasons and the bot's stderr.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable

import structlog
from aiohttp import BodyPartReader, web

from arena.hosting.archive import ArchiveLimits
from arena.hosting.builder import build, submit
from arena.hosting.errors import HostingError
from arena.hosting.presets import LANGS
from arena.hosting.versions import BotVersion, stderr_name
from arena.tournament.standings import compute_standings
from arena.web.ladders import main_game
from arena.hosting.queue import QueueFull
from arena.web.accounts import _bearer, _is_admin, require_bot_or_admin
from arena.web.limits import retry_after_header
from arena.web.errors import ApiError, check_name
from arena.web.hosting_state import HOSTING, Hosting
from arena.web.keys import QUERIES, STORE

__all__ = ["HOSTING", "Hosting", "routes", "setup"]

log = structlog.get_logger(__name__)
routes = web.RouteTableDef()



def setup(app: web.Application, hosting: Hosting) -> None:
    app[HOSTING] = hosting
    app.router.add_routes(routes)

    async def _wait_for_builds(app: web.Application) -> None:
        # Cancelled builds stay "building"; the next start builds them again.
        for task in list(hosting.builds):
            task.cancel()
        if hosting.builds:
            await asyncio.wait(hosting.builds, timeout=5)

    app.on_shutdown.append(_wait_for_builds)


def public_version(version: BotVersion) -> dict[str, Any]:
    return {"bot": version.bot, "version": version.version, "lang": version.lang,
            "status": version.status.value, "created_at": version.created_at,
            "built_at": version.built_at, "matches": len(version.matches),
            "validation": ({"passed": version.validation.get("passed"),
                            "match_id": version.validation.get("match_id")}
                           if version.validation else None)}


def owner_version(version: BotVersion) -> dict[str, Any]:
    return {**public_version(version), "reason": version.reason, "files": version.files,
            "build_seconds": version.build_seconds, "run": version.run,
            "match_ids": version.matches, "validation": version.validation}


async def _is_owner(request: web.Request, bot: Any) -> bool:
    if "Authorization" not in request.headers:
        return False
    await require_bot_or_admin(request, bot)
    return True


async def _bot(request: web.Request) -> Any:
    q = request.app[QUERIES]
    return await q.run(q.get_bot, check_name(request.match_info["name"]))


async def _read_upload(request: web.Request, limits: ArchiveLimits) -> tuple[bytes, str, str | None]:
    if not request.content_type.startswith("multipart/"):
        raise ApiError(400, "send the bot as multipart/form-data with a field 'file' "
                            "(e.g. curl -F file=@bot.py)")
    reader = await request.multipart()
    data: bytes | None = None
    filename = "upload"
    lang: str | None = None
    while (part := await reader.next()) is not None:
        if not isinstance(part, BodyPartReader):
            continue  # a nested multipart: not ours
        if part.name == "file":
            filename = part.filename or "upload"
            chunks, size = [], 0
            while chunk := await part.read_chunk(64 * 1024):
                size += len(chunk)
                if size > limits.max_upload_bytes:
                    raise ApiError(413, f"the upload is over {limits.max_upload_bytes >> 20} MiB")
                chunks.append(chunk)
            data = b"".join(chunks)
        elif part.name == "lang":
            lang = (await part.text()).strip() or None
            if lang not in (None, *LANGS):
                raise ApiError(400, f"lang must be one of {', '.join(LANGS)}; got {lang!r}")
    if data is None:
        raise ApiError(400, "the upload has no field 'file'")
    return data, filename, lang


@routes.post("/api/bots/{name}/versions")
async def upload(request: web.Request) -> web.Response:
    """Limits, in the order they cost the arena least: the bot's upload rate
    (the admin has none), the bodies read at once, the builds waiting."""
    bot = await _bot(request)
    await require_bot_or_admin(request, bot)
    if bot.removed:
        raise ApiError(410, f"bot {bot.name!r} was removed")
    hosting = request.app[HOSTING]
    if not _is_admin(request, _bearer(request)):
        wait = hosting.rate.take(bot.name)
        if wait is not None:
            per_hour = hosting.uploads.uploads_per_hour
            raise ApiError(429, f"bot {bot.name!r} sent its uploads for now ({per_hour:g} an hour "
                                f"after {hosting.uploads.upload_burst} at once)",
                           headers=retry_after_header(wait))
    if hosting.reading >= hosting.uploads.uploads_at_once:
        raise ApiError(429, "the arena is receiving other uploads; send it again in a few seconds",
                       headers=retry_after_header(5))
    hosting.reading += 1
    try:
        data, filename, lang = await _read_upload(request, hosting.limits)
        if hosting.queue.waiting >= hosting.queue.waiting_limit:
            raise ApiError(429, f"{hosting.queue.waiting} builds are waiting already; send the "
                                "upload again in a minute", headers=retry_after_header(60))
        version = await request.app[QUERIES].run(_submit, hosting, bot.name, data, filename, lang)
    except HostingError as exc:
        raise ApiError(400, str(exc)) from None
    finally:
        hosting.reading -= 1
    size = len(data)
    del data  # the body is in the store now; the memory goes back at once
    try:
        hosting.queue.submit(lambda: build(hosting.versions, version))
    except QueueFull as exc:  # filled while this one was stored: it waits for a restart
        raise ApiError(429, str(exc), headers=retry_after_header(60)) from None
    log.info("version_uploaded", bot=bot.name, version=version.version, bytes=size)
    location = f"/api/bots/{bot.name}/versions/{version.version}"
    return web.json_response({"version": owner_version(version)}, status=202,
                             headers={"Location": location})


def _submit(hosting: Hosting, bot: str, data: bytes, filename: str,
            lang: str | None) -> BotVersion:
    """(a read thread) Store and unpack the upload; the bot keeps its newest versions."""
    version = submit(hosting.versions, bot, data, filename, lang=lang, limits=hosting.limits)
    hosting.versions.prune(bot, keep=hosting.uploads.versions_kept)
    return version


@routes.get("/api/bots/{name}/versions")
async def list_versions(request: web.Request) -> web.Response:
    bot = await _bot(request)
    owner = await _is_owner(request, bot)
    store = request.app[HOSTING].versions
    versions = await asyncio.to_thread(store.versions, bot.name)  # files: off the loop
    shown = owner_version if owner else public_version
    active = await asyncio.to_thread(store.active, bot.name)
    return web.json_response({"bot": bot.name, "active": active.version if active else None,
                              "versions": [shown(v) for v in versions]})


async def _version(request: web.Request) -> tuple[Any, BotVersion]:
    bot = await _bot(request)
    try:
        number = int(request.match_info["version"])
        return bot, await asyncio.to_thread(request.app[HOSTING].versions.get, bot.name, number)
    except (ValueError, HostingError):
        raise ApiError(404, f"bot {bot.name!r} has no version "
                            f"{request.match_info['version']!r}") from None


@routes.get("/api/bots/{name}/versions/{version}")
async def get_version(request: web.Request) -> web.Response:
    bot, version = await _version(request)
    owner = await _is_owner(request, bot)
    store, q = request.app[STORE], request.app[QUERIES]
    matches = await q.run(lambda: [store.get_match(m) for m in version.matches])
    rows = [r.to_dict() for r in compute_standings(matches, bootstrap_samples=200,
                                                   game=main_game(matches))
            if r.bot == bot.name]
    body = owner_version(version) if owner else public_version(version)
    return web.json_response({"version": body, "standing": rows[0] if rows else None})


MAX_TAIL_BYTES = 16 << 20


def _ranged(request: web.Request, data: bytes) -> web.Response:
    """``data`` whole (200), or the part a ``Range: bytes=…`` header asks
    for (206; 416 when it lies past the end)."""
    if "Range" not in request.headers:
        return web.Response(body=data, content_type="text/plain", charset="utf-8")
    try:
        wanted = request.http_range
    except ValueError:
        raise ApiError(416, "the Range header is not bytes=START-END") from None
    start, stop, _ = wanted.indices(len(data))
    if start >= len(data) or start >= stop:
        return web.Response(status=416, headers={"Content-Range": f"bytes */{len(data)}"})
    return web.Response(body=data[start:stop], status=206, content_type="text/plain",
                        charset="utf-8",
                        headers={"Content-Range": f"bytes {start}-{stop - 1}/{len(data)}"})


async def _serve_log(request: web.Request, read: Callable[[], bytes | None],
                     missing: str | None) -> web.StreamResponse:
    """A log read from the store off the loop (each is cut to its cap when
    kept, so it fits in memory): whole, a ``Range`` of it, or its last
    ``?tail=N`` bytes. ``missing`` None: an absent log is an empty one."""
    tail = request.query.get("tail")
    if tail is not None and (not tail.isdigit() or not 0 < int(tail) <= MAX_TAIL_BYTES):
        raise ApiError(400, f"tail is a number of bytes from 1 to {MAX_TAIL_BYTES}")
    data = await asyncio.to_thread(read)
    if data is None:
        if missing is not None:
            raise ApiError(404, missing)
        data = b""
    if tail is not None:
        return web.Response(body=data[-int(tail):], content_type="text/plain", charset="utf-8")
    return _ranged(request, data)


@routes.get("/api/bots/{name}/versions/{version}/log")
async def build_log(request: web.Request) -> web.StreamResponse:
    bot, version = await _version(request)
    await require_bot_or_admin(request, bot)
    versions = request.app[HOSTING].versions
    return await _serve_log(request, lambda: versions.build_log_bytes(bot.name, version.version),
                            None)


@routes.get("/api/bots/{name}/versions/{version}/stderr/{match}")
async def match_stderr(request: web.Request) -> web.StreamResponse:
    bot, version = await _version(request)
    await require_bot_or_admin(request, bot)
    match = request.match_info["match"]
    versions = request.app[HOSTING].versions
    try:
        stderr_name(match)
    except HostingError as exc:
        raise ApiError(404, str(exc)) from None
    return await _serve_log(request, lambda: versions.stderr(bot.name, version.version, match),
                            f"no stderr kept for match {match!r}")
