"""Server-Sent Events: live pages subscribe to hub channels over HTTP.

``GET /api/live?channel=<c>[&channel=<c>...][&after=<seq>]``

Each hub message is one SSE ``data:`` line of JSON (its ``type`` says what it
is). For a ``match:<id>`` channel, ``after`` (or the browser's
``Last-Event-ID`` on reconnect) first replays the public events with a
larger ``seq`` from the hub's log (the older ones rebuilt from the store
when the hub's tail begins later), so a page that loaded the log and then
subscribed misses nothing in between. A comment line every
``HEARTBEAT_S`` seconds keeps proxies from closing an idle stream. A viewer
that leaves frees its slot at once (the app cancels the handlers of
departed clients). One address holds at most ``streams_per_address``
streams (429 beyond); all together at most the hub's limit (503). Streams
end when the app shuts down.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

from aiohttp import web

from arena.web.errors import ApiError, int_param
from arena.web.keys import HUB, QUERIES, STOPPING, STREAMS
from arena.live import MATCHES_CHANNEL, TOURNAMENTS_CHANNEL, HubFullError

routes = web.RouteTableDef()

CHANNEL_RE = re.compile(r"(match|standings|tournament):[A-Za-z0-9_.-]{1,64}")
MAX_CHANNELS = 4
HEARTBEAT_S = 15.0


def _channels(request: web.Request) -> list[str]:
    channels = request.query.getall("channel", [])
    if not channels:
        raise ApiError(400, "give at least one 'channel' query parameter, e.g. "
                            "channel=standings:ladder")
    if len(channels) > MAX_CHANNELS:
        raise ApiError(400, f"at most {MAX_CHANNELS} channels per stream")
    for c in channels:
        if c not in (MATCHES_CHANNEL, TOURNAMENTS_CHANNEL) and not CHANNEL_RE.fullmatch(c):
            raise ApiError(400, f"unknown channel {c[:80]!r}: use 'matches', 'tournaments', "
                                "'match:<id>', 'standings:<scope>' or 'tournament:<id>'")
    return list(dict.fromkeys(channels))


def _after(request: web.Request) -> int | None:
    """Replay match events with a larger seq; None: only new ones."""
    last = request.headers.get("Last-Event-ID")
    if last is not None and last.lstrip("-").isdigit():
        return int(last)
    if "after" not in request.query:
        return None
    return int_param(request, "after", -1, lo=-1)


def _frame(message: dict[str, Any]) -> bytes:
    lines = []
    if message.get("type") == "event" and isinstance(message.get("seq"), int):
        lines.append(f"id: {message['seq']}")
    lines.append("data: " + json.dumps(message, separators=(",", ":")))
    return ("\n".join(lines) + "\n\n").encode()


@routes.get("/api/live")
async def live(request: web.Request) -> web.StreamResponse:
    channels = _channels(request)
    after = _after(request)
    address = request.remote or "unknown"
    streams = request.app[STREAMS]
    if not streams.acquire(address):
        raise ApiError(429, f"this address has {streams.limit} live streams open already; "
                            "close one first", headers={"Retry-After": "10"})
    try:
        return await _stream(request, channels, after)
    finally:
        streams.release(address)


async def _stream(request: web.Request, channels: list[str],
                  after: int | None) -> web.StreamResponse:
    hub = request.app[HUB]
    try:
        async with hub.subscribe(*channels) as sub:
            response = web.StreamResponse(headers={
                "Content-Type": "text/event-stream", "Cache-Control": "no-cache",
                "X-Accel-Buffering": "no"})
            await response.prepare(request)
            # Subscribed before reading the log: nothing can fall in between;
            # duplicates are skipped by seq.
            sent: dict[str, int] = {}
            await response.write(b"retry: 3000\n\n")
            for c in channels:
                if c.startswith("match:") and after is not None:
                    match_id = c.removeprefix("match:")
                    for entry in await _replay(request, match_id, after):
                        if entry["seq"] > after:
                            await response.write(_frame({"type": "event", "match": match_id,
                                                         **entry}))
                            sent[match_id] = entry["seq"]
            await _pump(request, response, sub, sent)
            return response
    except HubFullError as e:
        raise ApiError(503, str(e), headers={"Retry-After": "10"}) from None


async def _replay(request: web.Request, match_id: str, after: int) -> list[dict[str, Any]]:
    """The match's public events to replay after ``after``: the hub's tail,
    or, when the tail begins later, every event with the older ones rebuilt
    from the store (see :class:`arena.web.live_events.LiveEvents`)."""
    log = request.app[HUB].public_log(match_id) or []
    if not log or log[0]["seq"] <= after + 1:
        return log
    queries = request.app[QUERIES]
    record = await queries.run(queries.get_match, match_id)
    events = None if record is None else await queries.live_events.all_of(record)
    return log if events is None else events


async def _pump(request: web.Request, response: web.StreamResponse, sub: Any,
                sent: dict[str, int]) -> None:
    stopping = asyncio.ensure_future(request.app[STOPPING].wait())
    getter: asyncio.Future[Any] | None = None
    try:
        while True:
            getter = asyncio.ensure_future(anext(sub))
            done, _ = await asyncio.wait({getter, stopping}, timeout=HEARTBEAT_S,
                                         return_when=asyncio.FIRST_COMPLETED)
            if getter not in done:
                getter.cancel()  # safe: the subscription keeps undelivered messages
                if stopping in done:
                    return
                await response.write(b": ping\n\n")
                continue
            try:
                message = getter.result()
            except StopAsyncIteration:
                return
            if message.get("type") == "event":
                if message["seq"] <= sent.get(message["match"], -1):
                    continue
                sent[message["match"]] = message["seq"]
            await response.write(_frame(message))
    except ConnectionResetError:
        return  # the viewer left
    finally:
        # A viewer that leaves cancels this handler inside asyncio.wait, with
        # the wait for the next message still pending: left alone, it would be
        # collected pending ("Task was destroyed but it is pending!").
        stopping.cancel()
        if getter is not None:
            getter.cancel()
