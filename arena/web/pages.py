"""HTML pages and the fragments live pages refetch when told to.

Pages are rendered on the server (they work without JavaScript); the
scripts in ``static/`` add live updates over SSE and the replay viewer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from aiohttp import web

from arena.games import UnknownGameError, get_game
from arena.storage.base import PERSON_KIND, MatchStatus
from arena.web import docs
from arena.web.entrants import entrant_of
from arena.web.errors import ApiError, check_name, int_param
from arena.web.api import game_param, optional_game, server_game
from arena.web.bot_page import all_matches_link, bot_game_section, house_note, scope_nav
from arena.web.gauntlet_view import format_fact, gauntlet_section
from arena.web.hosting_pages import versions_section
from arena.web.ladder_view import LadderSet, ladder_sections, standings_fragment
from arena.web.ladders import game_title, known_games, ladder_games
from arena.web.keys import QUERIES
from arena.web.memory import memory_section
from arena.live import LADDER
from arena.web.play import PEOPLE_TABLES
from arena.web.play_pages import people_ladders, play_links
from arena.people import PEOPLE
from arena.web.plots import scope_charts
from arena.web.queries import ALL
from arena.web.render import (
    bot_link,
    e,
    layout,
    live_list,
    live_section,
    matches_table,
    num,
    pager,
    progress_bar,
    standings_table,
    tournament_link,
    u,
    waiting_note,
    when,
)

routes = web.RouteTableDef()
PAGE_SIZE = 50


def _html(text: str, status: int = 200) -> web.Response:
    return web.Response(text=text, status=status, content_type="text/html",
                        headers={"Cache-Control": "no-cache"})


def _tournaments_list(items: list[dict[str, Any]]) -> str:
    if not items:
        return '<p class="empty">No tournaments yet.</p>'
    rows = "".join(
        f'<li>{tournament_link(t["id"], t["name"])} <span class="status {e(t["status"])}">'
        f'{e(t["status"])}</span> <small>{t["progress"]["done"]}/{t["progress"]["total"]} '
        f'matches</small></li>' for t in items)
    return f'<ul class="tournaments">{rows}</ul>'


# -- fragments ----------------------------------------------------------------
def _page_game(request: web.Request, scope: str) -> str:
    """The game a standings view of ``scope`` shows: a tournament's own
    game, else ``?game=``, else the server's default game."""
    if scope in (LADDER, ALL, PEOPLE):
        return game_param(request)
    return game_param(request, request.app[QUERIES].get_tournament(scope)["game"])


@routes.get("/partials/standings")
async def standings_partial(request: web.Request) -> web.Response:
    scope = request.query.get("scope", LADDER)
    if scope not in (LADDER, ALL):
        check_name(scope, "scope")
    several = scope in (LADDER, ALL, PEOPLE) and len(ladder_games(server_game(request))) > 1
    return _html(standings_fragment(request, scope, _page_game(request, scope), several))


def _charts_fragment(request: web.Request, tid: str, game: str) -> str:
    q = request.app[QUERIES]
    order = [r["bot"] for r in q.standings(tid, game)]
    return scope_charts(q.scope_series(tid, game), order, "the tournament", game)


@routes.get("/partials/charts")
async def charts_partial(request: web.Request) -> web.Response:
    tid = check_name(request.query.get("tournament"), "tournament id")
    return _html(_charts_fragment(request, tid, _page_game(request, tid)))


@routes.get("/partials/live")
async def live_partial(request: web.Request) -> web.Response:
    return _html(live_list(request.app[QUERIES].live_matches()))


@routes.get("/partials/matches")
async def matches_partial(request: web.Request) -> web.Response:
    tid = request.query.get("tournament")
    if tid is not None:
        check_name(tid, "tournament id")
    items, _ = request.app[QUERIES].list_matches(
        bot=None, tournament_id=tid, status=None, limit=20, offset=0)
    return _html(matches_table(items, "Latest matches"))


@routes.get("/partials/tournaments")
async def tournaments_partial(request: web.Request) -> web.Response:
    items, _ = request.app[QUERIES].list_tournaments(50, 0)
    return _html(_tournaments_list(items))


# -- pages ------------------------------------------------------------------------
@routes.get("/")
async def index(request: web.Request) -> web.Response:
    q = request.app[QUERIES]
    tournaments, _ = q.list_tournaments(50, 0)
    recent, _ = q.list_matches(bot=None, tournament_id=None, status=MatchStatus.FINISHED,
                               limit=10, offset=0)
    main = f"""
<h1>Standings</h1>
<p id="live-status" class="live-status" role="status" aria-live="polite"></p>
{live_section("live", "Live now", "/partials/live", live_list(q.live_matches()))}
{play_links() if PEOPLE_TABLES in request.app else ""}
{_ladders(request)}
{people_ladders(request) if PEOPLE_TABLES in request.app else ""}
{live_section("tournaments", "Tournaments", "/partials/tournaments",
              _tournaments_list(tournaments))}
<section aria-labelledby="h-recent"><h2 id="h-recent">Latest finished matches</h2>
{matches_table(recent, "Latest finished matches", empty="No match has finished yet.")}
<p><a href="/matches">All matches</a></p></section>"""
    people = f" standings:{PEOPLE}" if PEOPLE_TABLES in request.app else ""
    page = f'<div data-live-channels="standings:{LADDER}{people} matches tournaments">{main}</div>'
    return _html(layout("Standings", page, scripts=("common.js", "live.js")))


def _ladders(request: web.Request) -> str:
    """One ladder per game served, the server's default game first; with a
    single game, the one ladder as it always looked."""
    games = ladder_games(server_game(request))
    if len(games) == 1:
        return live_section("ladder", "Ladder", f"/partials/standings?scope={LADDER}",
                            standings_fragment(request, LADDER, games[0]), box="standings")
    nav = " · ".join(f'<a href="#ladder-{e(g)}">{e(game_title(g))}</a>' for g in games)
    return ladder_sections(request, LadderSet(
        scope=LADDER, key="ladder", box="standings", title="Ladders",
        intro=f'<nav class="games" aria-label="Games"><p>One ladder per game: {nav}</p></nav>',
        game_ids=True, footer=_ladder_links), games)


def _ladder_links(game: str) -> str:
    return (f'<p><a href="/matches?{e(urlencode({"game": game}))}">{e(game_title(game))} '
            f'matches</a> {docs.game_docs_links(game)}</p>')


@routes.get("/tournaments/{id}")
async def tournament(request: web.Request) -> web.Response:
    q = request.app[QUERIES]
    t = q.get_tournament(request.match_info["id"])
    tid = t["id"]
    matches, total = q.list_matches(bot=None, tournament_id=tid, status=None, limit=20,
                                    offset=0)
    game = t["game"]
    standings = q.standings(tid, game)
    p = t["progress"]
    main = f"""
<div data-live-channels="tournament:{e(tid)}">
<h1>Tournament {e(t["name"])}</h1>
<p id="live-status" class="live-status" role="status" aria-live="polite"></p>
<dl class="facts"><dt>Id</dt><dd>{e(tid)}</dd>
<dt>Game</dt><dd>{e(t["game"])} {docs.game_docs_links(game)}</dd>
<dt>Status</dt><dd><span class="status {e(t["status"])}">{e(t["status"])}</span></dd>
<dt>Created</dt><dd>{when(t["created_at"])}</dd>
<dt>Finished</dt><dd>{when(t["finished_at"])}</dd>{_rounds_fact(p)}{format_fact(p)}</dl>
{progress_bar(p["done"], p["total"])}
{waiting_note(t.get("waiting"))}
{gauntlet_section(tid, t.get("gauntlet"))}
{live_section("standings", "Standings", f"/partials/standings?scope={u(tid)}",
              standings_table(standings, "Standings of " + t["name"], tid, game))}
{live_section("charts", "Over the tournament", f"/partials/charts?tournament={u(tid)}",
              _charts_fragment(request, tid, game))}
{live_section("matches", "Matches", f"/partials/matches?tournament={u(tid)}",
              matches_table(matches, "Latest matches"),
              after=f'<p><a href="/matches?tournament={u(tid)}">All {total} matches</a></p>')}
{memory_section(q.get_tournament(tid, internal=True)["config"])}
</div>"""
    return _html(layout(f"Tournament {t['name']}", main, scripts=("common.js", "live.js")))


def _rounds_fact(progress: dict[str, Any]) -> str:
    """A Swiss tournament's round (its schedule grows a round at a time)."""
    if "rounds" not in progress:
        return ""
    return (f'<dt>Format</dt><dd>Swiss, round <span id="swiss-round">{progress["round"]}'
            f'</span> of {progress["rounds"]}</dd>')


@routes.get("/matches")
async def matches(request: web.Request) -> web.Response:
    params: dict[str, str] = {}
    for key, what in (("bot", "bot name"), ("tournament", "tournament id")):
        if key in request.query:
            params[key] = check_name(request.query[key], what)
    status = None
    if "status" in request.query:
        try:
            status = MatchStatus(request.query["status"])
        except ValueError:
            raise ApiError(400, f"unknown status {request.query['status']!r}") from None
        params["status"] = status.value
    game = optional_game(request)
    if game is not None:
        params["game"] = game
    offset = int_param(request, "offset", 0, lo=0)
    items, total = request.app[QUERIES].list_matches(
        bot=params.get("bot"), tournament_id=params.get("tournament"), status=status,
        limit=PAGE_SIZE, offset=offset, game=game)
    filters = ", ".join(f"{k} {v}" for k, v in params.items()) or "all"
    main = (f"<h1>Matches</h1><p>Showing: {e(filters)} ({total} in all).</p>"
            f"{_game_filter(params, game)}"
            f"{matches_table(items, 'Matches, newest first')}"
            f"{pager('/matches', params, total, PAGE_SIZE, offset)}")
    return _html(layout("Matches", main))


def _game_filter(params: dict[str, str], current: str | None) -> str:
    """Links to the same list for every game, and for all games."""
    others = {k: v for k, v in params.items() if k != "game"}
    choices = [(None, "all games")] + [(g, game_title(g)) for g in known_games()]
    links = " · ".join(
        f'<a href="/matches?{e(urlencode({**others, **({"game": g} if g else {})}))}"'
        f'{" aria-current=page" if g == current else ""}>{e(label)}</a>' for g, label in choices)
    return f'<nav class="games" aria-label="Game"><p>Game: {links}</p></nav>'


@dataclass(frozen=True)
class MatchView:
    """How the match page draws one game: its replay script (a file in
    ``static/``, or None: no viewer) and the result columns of the seats
    table, as ``(key of match_end.result, heading)``. Each game describes
    itself in its spec's ``extra["web"]``; the page never names a game."""

    replay_script: str | None
    result_columns: tuple[tuple[str, str], ...]


PLACE_ONLY = MatchView(None, (("ranks", "Place"),))


def match_view(game: str | None) -> MatchView:
    try:
        described = get_game(str(game)).extra.get("web") or {}
    except UnknownGameError:
        return PLACE_ONLY
    columns = tuple((str(key), str(title)) for key, title in described.get("result_columns", ()))
    return MatchView(described.get("replay_script"), columns or PLACE_ONLY.result_columns)


@routes.get("/matches/{id}")
async def match(request: web.Request) -> web.Response:
    detail = request.app[QUERIES].match_detail(request.match_info["id"])
    m = detail["match"]
    view = match_view(m["game"])
    result = m.get("result") or {}
    faults = m.get("faults") or []
    latency = m.get("latency") or []
    rows = []
    for seat, name in enumerate(m["players"]):
        def pick(key: str, s: int = seat) -> Any:
            values = result.get(key) or []
            return values[s] if s < len(values) else None
        f = faults[seat] if seat < len(faults) else {}
        lat = latency[seat] if seat < len(latency) else {}
        fault_text = ", ".join(f"{k} {v}" for k, v in f.items() if v and k != "autopilot")
        if f.get("autopilot"):
            fault_text = (fault_text + ", " if fault_text else "") + "autopilot"
        figures = "".join(f'<td class="n">{num(pick(key))}</td>'
                          for key, _ in view.result_columns)
        rows.append(f'<tr><td class="n">{seat}</td><th scope="row">{bot_link(name)}</th>'
                    f'{figures}'
                    f'<td class="n">{num(lat.get("median_ms"), 1)}</td>'
                    f'<td>{e(fault_text or "—")}</td></tr>')
    headings = "".join(f'<th scope="col">{e(title)}</th>' for _, title in view.result_columns)
    tid = m.get("tournament_id")
    where = tournament_link(tid) if tid else "ladder"
    note = ""
    if detail["live"]:
        note = ('<p class="note">This match is being played: only public information is shown '
                'until it ends; then the full deal and its commitments appear.</p>')
    elif detail["embargoed"]:
        note = ('<p class="note">The replay of this match is held back until every rotation '
                'of its deals in the tournament has been played (they share the decks).</p>')
    elif m["status"] == MatchStatus.ABORTED.value:
        note = f'<p class="note">Aborted: {e(m.get("abort_reason") or "no reason given")}.</p>'
    status = f'<span id="match-status" class="status {e(m["status"])}">{e(m["status"])}</span>'
    log_link = (f'<a href="/api/matches/{u(m["id"])}">/api/matches/{e(m["id"])}</a>')
    if view.replay_script is None:
        fallback = f"<p>This game has no replay viewer; the full log is at {log_link}.</p>"
        scripts: tuple[str, ...] = ("common.js",)
    else:
        fallback = (f"<noscript><p>The replay viewer needs JavaScript; the full log is at "
                    f"{log_link}.</p></noscript>")
        scripts = ("common.js", view.replay_script)
    main = f"""
<h1>Match {e(m["id"])}</h1>
<dl class="facts"><dt>Game</dt><dd>{e(m["game"])} {docs.game_docs_links(str(m["game"]))}</dd>
<dt>Status</dt><dd>{status}</dd>
<dt>Where</dt><dd>{where}</dd><dt>Started</dt><dd>{when(m.get("started_at"))}</dd>
<dt>Finished</dt><dd>{when(m.get("finished_at"))}</dd></dl>
{note}
<table class="seats"><caption>Players and result</caption><thead><tr>
<th scope="col">Seat</th><th scope="col">Bot</th>{headings}
<th scope="col">Median latency (ms)</th><th scope="col">Faults</th></tr></thead>
<tbody>{"".join(rows)}</tbody></table>
<section id="replay" class="replay" aria-labelledby="h-replay" data-match="{e(m["id"])}"
 data-game="{e(m["game"])}"><h2 id="h-replay">{"Live table" if detail["live"] else "Replay"}</h2>
{fallback}
</section>"""
    return _html(layout(f"Match {m['id']}", main, scripts=scripts))


@routes.get("/bots/{name}")
async def bot(request: web.Request) -> web.Response:
    name = request.match_info["name"]
    q = request.app[QUERIES]
    record = q.registered_bot(name)
    if record is not None and record.kind == PERSON_KIND:  # a person has a page of their own
        raise web.HTTPFound(f"/people/{u(name)}")
    if entrant_of(name) != name and record is None:
        # A numbered house seat: its page is its strategy's entrant.
        raise web.HTTPFound(f"/bots/{u(entrant_of(name))}"
                            + (f"?{request.query_string}" if request.query_string else ""))
    scope = request.query.get("scope", ALL)
    if scope not in (LADDER, ALL):
        check_name(scope, "scope")
    games = q.bot_games(name, scope)
    if request.query.get("game"):
        games = [game_param(request)]
    elif not games:
        games = [server_game(request)]
    several = len(games) > 1
    first = q.bot_stats(name, scope, 20, games[0])
    b = first["bot"]
    sections = "".join(bot_game_section(request, name, scope, g, several) for g in games)
    played = ""
    if several:
        played = ("<dt>Games</dt><dd>" + ", ".join(
            f'<a href="#game-{e(g)}">{e(game_title(g))}</a>' for g in games) + "</dd>")
    main = f"""
<h1>Bot {e(b["name"])}</h1>
{scope_nav(request, b["name"], scope)}
<dl class="facts"><dt>Kind</dt><dd>{e(b["kind"])}{house_note(request, b["name"], scope)}</dd>
<dt>{"Registered" if q.registered_bot(b["name"]) else "First seen"}</dt>
<dd>{when(b["created_at"])}</dd>
{"<dt>Status</dt><dd>removed</dd>" if b["removed"] else ""}{played}</dl>
{sections}
{versions_section(request, b["name"])}
<p>{all_matches_link(b["name"], scope)}</p>"""
    return _html(layout(f"Bot {b['name']}", main))


# -- documents ------------------------------------------------------------------
async def _document(request: web.Request, document: docs.Document, before: str = "") -> web.Response:
    try:
        title, body = docs.render_document(document)
    except docs.DocumentMissingError as err:
        raise ApiError(404, str(err)) from None
    main = (f'{before}<article class="doc">{body}</article>'
            f'<p class="legend-note">Rendered from <code>{e(document.path)}</code>.</p>')
    return _html(layout(title, main))


@routes.get("/rules")
async def rules(request: web.Request) -> web.Response:
    """``?game=NAME``: that game's rules; without it, the server's default game's."""
    game = game_param(request)
    document = docs.rules_document(game)
    if document is None:
        raise ApiError(404, f"the game {game!r} publishes no rules page")
    links = " · ".join(
        f'<a href="/rules?{e(urlencode({"game": g}))}"{" aria-current=page" if g == game else ""}>'
        f'{e(game_title(g))}</a>' for g in known_games() if docs.rules_document(g) is not None)
    nav = (f'<nav class="games" aria-label="Rules of each game"><p>Rules: {links} · '
           f'<a href="{e(docs.protocol_url(game))}">the protocol for {e(game_title(game))}</a>'
           f'</p></nav>')
    return await _document(request, document, nav)


@routes.get("/protocol")
async def protocol(request: web.Request) -> web.Response:
    return await _document(request, docs.documents()["protocol"])


@routes.get("/docs/api")
async def api_document(request: web.Request) -> web.Response:
    return await _document(request, docs.documents()["api"])
