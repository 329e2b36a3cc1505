"""Challenges over HTTP: ask for unrated matches, follow them on a page.

``POST /api/challenges`` with a bot's own token asks for ``matches``
unrated matches of that bot against named ``opponents`` of the same game;
``GET /api/challenges/{id}`` and the page ``/challenges/{id}`` show its
state, its matches and its result table (with intervals). The arena plays
them when their bots are free (arena/tournament/challenge_play.py); the
rules and quotas are in arena/tournament/challenge.py.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

from aiohttp import web

from arena.auth import hash_token
from arena.games import UnknownGameError, get_game
from arena.storage.base import NotFoundError, Store
from arena.tournament.challenge import (
    ChallengeError,
    ChallengeLimits,
    ChallengeRequest,
    QuotaExceededError,
    check_request,
)
from arena.tournament.challenge_store import (
    challenge_wire,
    challenges_of,
    create_challenge,
    get_challenge,
    ladder_games_of,
)
from arena.web.accounts import _auth_failed, _bearer, _json_object, store_write
from arena.web.errors import ApiError, check_name
from arena.web.hosting_state import HOSTING
from arena.web.keys import QUERIES, SETTINGS, STORE
from arena.web.render import e, layout, matches_table, standings_table, u, when

LadderBots = Callable[[], list[tuple[str, str]]]
LIMITS = web.AppKey("challenge_limits", ChallengeLimits)
CONNECTED = web.AppKey("challenge_connected", object)  # LadderBots: (bot, game) opted in
routes = web.RouteTableDef()


def setup(app: web.Application, limits: ChallengeLimits,
          connected: LadderBots | None = None) -> None:
    app[LIMITS] = limits
    app[CONNECTED] = connected or (lambda: [])
    app.router.add_routes(routes)


def _eligible(store: Store, hosting: Any, connected: list[tuple[str, str]], game: str,
              names: tuple[str, ...]) -> set[str]:
    """(a read thread) Which of ``names`` may be challenged in ``game``:
    registered, not removed, and on its ladder, hosted for it, or connected
    with the ladder opt-in."""
    found = set()
    for name in names:
        bot = store.get_bot(name)
        if bot is None or bot.removed:
            continue
        if (name, game) in connected or game in ladder_games_of(store, name):
            found.add(name)
            continue
        version = hosting.versions.active(name) if hosting is not None else None
        if version is not None and getattr(version, "game", None) == game \
                and getattr(version.status, "value", None) == "ready":
            found.add(name)
    return found


def _request_of(body: dict[str, Any], challenger: str, default_game: str) -> ChallengeRequest:
    game = body.get("game", default_game)
    opponents = body.get("opponents")
    matches = body.get("matches", 1)
    house = body.get("house_bot")
    if not isinstance(game, str):
        raise ApiError(400, "game must be a string")
    if not isinstance(opponents, list) or not all(isinstance(o, str) for o in opponents):
        raise ApiError(400, "opponents must be a list of bot names")
    if isinstance(matches, bool) or not isinstance(matches, int):
        raise ApiError(400, f"matches must be an integer; got {matches!r:.40}")
    if house is not None and not isinstance(house, str):
        raise ApiError(400, "house_bot must be a string")
    return ChallengeRequest(challenger=challenger, game=game,
                            opponents=tuple(check_name(o, "opponent") for o in opponents),
                            matches=matches, house_bot=house)


@routes.post("/api/challenges")
async def create(request: web.Request) -> web.Response:
    """Ask for unrated matches; the bot's token says who asks."""
    token = _bearer(request)
    if token is None:
        raise ApiError(401, "send your bot's token as 'Authorization: Bearer <token>': a "
                            "challenge is asked for by the bot that plays it",
                       headers={"WWW-Authenticate": "Bearer"})
    q = request.app[QUERIES]
    store = request.app[STORE]
    bot = await q.run(store.find_bot_by_token_hash, hash_token(token))
    if bot is None or bot.removed:
        raise _auth_failed(request, "unknown bot token: a challenge needs the token of a "
                                    "registered bot")
    body = await _json_object(request)
    default_game = request.app[SETTINGS].server_info.get("game") or "muushig"
    ask = _request_of(body, bot.name, str(default_game))
    try:
        spec = get_game(ask.game)
    except UnknownGameError as exc:
        raise ApiError(400, str(exc)) from None
    house = ask.house_bot or spec.default_house_bot
    if house not in spec.house_bots:
        raise ApiError(400, f"house_bot must be one of {', '.join(sorted(spec.house_bots))}")
    limits = request.app[LIMITS]
    connected = request.app[CONNECTED]()  # type: ignore[operator]
    eligible = await q.run(_eligible, store, request.app.get(HOSTING), connected, ask.game,
                           ask.opponents)
    try:
        check_request(ask, seats=spec.n_seats, eligible=eligible, limits=limits)
        record = await store_write(request, create_challenge, store, ask, limits=limits,
                                   now=time.time(), seats=spec.n_seats, house_bot=house)
    except QuotaExceededError as exc:
        raise ApiError(429, str(exc),
                       headers={"Retry-After": str(math.ceil(exc.retry_after_s))}) from None
    except ChallengeError as exc:
        raise ApiError(400, str(exc)) from None
    wire = await q.run(challenge_wire, store, record, limits=limits)
    return web.json_response({"challenge": wire}, status=201,
                             headers={"Location": f"/api/challenges/{record.id}"})


def _detail(request: web.Request, challenge_id: str) -> dict[str, Any]:
    """(a read thread) The challenge, its results and its latest matches."""
    q = request.app[QUERIES]
    store = request.app[STORE]
    try:
        record = get_challenge(store, challenge_id)
    except NotFoundError:
        raise ApiError(404, f"no challenge with id {challenge_id!r}") from None
    wire = challenge_wire(store, record, limits=request.app[LIMITS])
    matches, _ = q.list_matches(bot=None, tournament_id=record.id, status=None, limit=50,
                                offset=0)
    table = q.scopes.peek(record.id)
    if table is None or table.key < wire["played"]:
        # The cache may keep an older table while it cools down; beside the
        # challenge's own count of played matches it would contradict it.
        # A challenge has few matches: compute its table now.
        table = q.scopes.compute_now(record.id)
    return {"challenge": wire, "results": table.game(record.game).rows, "matches": matches}


@routes.get("/api/challenges")
async def list_challenges(request: web.Request) -> web.Response:
    bot = request.query.get("bot")
    if bot is not None:
        check_name(bot)
    q = request.app[QUERIES]
    store = request.app[STORE]

    def read() -> list[dict[str, Any]]:
        return [challenge_wire(store, r, limits=request.app[LIMITS])
                for r in challenges_of(store, bot)[:200]]

    return web.json_response({"challenges": await q.run(read)})


@routes.get("/api/challenges/{id}")
async def detail(request: web.Request) -> web.Response:
    cid = check_name(request.match_info["id"], "challenge id")
    q = request.app[QUERIES]
    if not await q.run(_exists, request, cid):
        raise ApiError(404, f"no challenge with id {cid!r}")
    await q.prepare(cid)  # its result table, computed off the loop
    return web.json_response(await q.run(_detail, request, cid))


def _exists(request: web.Request, cid: str) -> bool:
    try:
        get_challenge(request.app[STORE], cid)
    except NotFoundError:
        return False
    return True


@routes.get("/challenges/{id}")
async def page(request: web.Request) -> web.Response:
    cid = check_name(request.match_info["id"], "challenge id")
    q = request.app[QUERIES]
    if not await q.run(_exists, request, cid):
        raise web.HTTPNotFound(text=layout("No such challenge",
                                           f"<h1>No challenge {e(cid)}</h1>"),
                               content_type="text/html")
    await q.prepare(cid)
    d = await q.run(_detail, request, cid)
    c = d["challenge"]
    opponents = ", ".join(e(o) for o in c["opponents"])
    main = f"""
<div data-live-channels="tournament:{e(cid)}">
<h1>Challenge by {e(c["challenger"])}</h1>
<p>Unrated matches: they count on no ladder and change no rating.</p>
<dl class="facts"><dt>Id</dt><dd>{e(cid)}</dd><dt>Game</dt><dd>{e(c["game"])}</dd>
<dt>Opponents</dt><dd>{opponents}</dd>
<dt>State</dt><dd><span class="status {e(c["state"])}">{e(c["state"])}</span></dd>
<dt>Matches</dt><dd>{c["played"]} played of {c["matches"]} asked, {c["waiting"]} waiting,
{c["given_up"]} given up</dd>
<dt>Asked</dt><dd>{when(c["created_at"])}</dd><dt>Ended</dt><dd>{when(c["finished_at"])}</dd>
</dl>
<section aria-labelledby="h-results"><h2 id="h-results">Results</h2>
{standings_table(d["results"], "Results of the challenge", cid, c["game"])}
<p>Intervals are 95 % bootstrap intervals over the matches played.</p></section>
<section aria-labelledby="h-matches"><h2 id="h-matches">Matches</h2>
{matches_table(d["matches"], "Matches of the challenge", "No match played yet.")}
<p><a href="/matches?tournament={u(cid)}">All matches</a></p></section>
</div>"""
    return web.Response(text=layout(f"Challenge {cid}", main, scripts=("common.js", "live.js")),
                        content_type="text/html", headers={"Cache-Control": "no-cache"})
