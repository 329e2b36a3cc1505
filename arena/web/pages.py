"""HTML pages and the fragments live pages refetch when told to.

Pages are rendered on the server (they work without JavaScript); the
scripts in ``static/`` add live updates over SSE and the replay viewer.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from aiohttp import web

from arena.games import UnknownGameError, get_game
from arena.storage.base import MatchRecord, MatchStatus
from arena.web import docs
from arena.web.entrants import entrant_of, is_house_entrant
from arena.web.errors import ApiError, check_name, int_param
from arena.web.hosting_pages import versions_section
from arena.web.keys import QUERIES
from arena.live import LADDER
from arena.web.plots import bot_stars_chart, scope_charts
from arena.web.queries import ALL
from arena.web.render import (
    bot_link,
    e,
    layout,
    live_list,
    match_link,
    matches_table,
    num,
    pager,
    progress_bar,
    rating_chart,
    rating_text,
    standings_table,
    tournament_link,
    u,
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
def _standings_fragment(request: web.Request, scope: str) -> str:
    caption = "Ladder (matches outside tournaments)" if scope == LADDER else "Standings"
    return standings_table(request.app[QUERIES].standings(scope), caption, scope)


@routes.get("/partials/standings")
async def standings_partial(request: web.Request) -> web.Response:
    scope = request.query.get("scope", LADDER)
    if scope not in (LADDER, ALL):
        check_name(scope, "scope")
    return _html(_standings_fragment(request, scope))


def _charts_fragment(request: web.Request, tid: str) -> str:
    q = request.app[QUERIES]
    order = [r["bot"] for r in q.standings(tid)]
    return scope_charts(q.scope_series(tid), order, "the tournament")


@routes.get("/partials/charts")
async def charts_partial(request: web.Request) -> web.Response:
    tid = check_name(request.query.get("tournament"), "tournament id")
    return _html(_charts_fragment(request, tid))


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
<section aria-labelledby="h-live"><h2 id="h-live">Live now</h2>
<div id="live" data-partial="/partials/live">{live_list(q.live_matches())}</div></section>
<section aria-labelledby="h-ladder"><h2 id="h-ladder">Ladder</h2>
<div id="standings" data-partial="/partials/standings?scope={LADDER}">
{_standings_fragment(request, LADDER)}</div></section>
<section aria-labelledby="h-tournaments"><h2 id="h-tournaments">Tournaments</h2>
<div id="tournaments" data-partial="/partials/tournaments">{_tournaments_list(tournaments)}</div>
</section>
<section aria-labelledby="h-recent"><h2 id="h-recent">Latest finished matches</h2>
{matches_table(recent, "Latest finished matches", empty="No match has finished yet.")}
<p><a href="/matches">All matches</a></p></section>"""
    page = f'<div data-live-channels="standings:{LADDER} matches tournaments">{main}</div>'
    return _html(layout("Standings", page, scripts=("common.js", "live.js")))


@routes.get("/tournaments/{id}")
async def tournament(request: web.Request) -> web.Response:
    q = request.app[QUERIES]
    t = q.get_tournament(request.match_info["id"])
    tid = t["id"]
    matches, total = q.list_matches(bot=None, tournament_id=tid, status=None, limit=20,
                                    offset=0)
    standings = q.standings(tid)
    p = t["progress"]
    main = f"""
<div data-live-channels="tournament:{e(tid)}">
<h1>Tournament {e(t["name"])}</h1>
<p id="live-status" class="live-status" role="status" aria-live="polite"></p>
<dl class="facts"><dt>Id</dt><dd>{e(tid)}</dd><dt>Game</dt><dd>{e(t["game"])}</dd>
<dt>Status</dt><dd><span class="status {e(t["status"])}">{e(t["status"])}</span></dd>
<dt>Created</dt><dd>{when(t["created_at"])}</dd>
<dt>Finished</dt><dd>{when(t["finished_at"])}</dd></dl>
{progress_bar(p["done"], p["total"])}
<section aria-labelledby="h-standings"><h2 id="h-standings">Standings</h2>
<div id="standings" data-partial="/partials/standings?scope={u(tid)}">
{standings_table(standings, "Standings of " + t["name"], tid)}</div></section>
<section aria-labelledby="h-charts"><h2 id="h-charts">Over the tournament</h2>
<div id="charts" data-partial="/partials/charts?tournament={u(tid)}">
{_charts_fragment(request, tid)}</div></section>
<section aria-labelledby="h-matches"><h2 id="h-matches">Matches</h2>
<div id="matches" data-partial="/partials/matches?tournament={u(tid)}">
{matches_table(matches, "Latest matches")}</div>
<p><a href="/matches?tournament={u(tid)}">All {total} matches</a></p></section>
</div>"""
    return _html(layout(f"Tournament {t['name']}", main, scripts=("common.js", "live.js")))


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
    offset = int_param(request, "offset", 0, lo=0)
    items, total = request.app[QUERIES].list_matches(
        bot=params.get("bot"), tournament_id=params.get("tournament"), status=status,
        limit=PAGE_SIZE, offset=offset)
    filters = ", ".join(f"{k} {v}" for k, v in params.items()) or "all"
    main = (f"<h1>Matches</h1><p>Showing: {e(filters)} ({total} in all).</p>"
            f"{matches_table(items, 'Matches, newest first')}"
            f"{pager('/matches', params, total, PAGE_SIZE, offset)}")
    return _html(layout("Matches", main))


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
<dl class="facts"><dt>Game</dt><dd>{e(m["game"])}</dd>
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
    if entrant_of(name) != name and q.registered_bot(name) is None:
        # A numbered house seat: its page is its strategy's entrant.
        raise web.HTTPFound(f"/bots/{u(entrant_of(name))}"
                            + (f"?{request.query_string}" if request.query_string else ""))
    scope = request.query.get("scope", ALL)
    if scope not in (LADDER, ALL):
        check_name(scope, "scope")
    stats = q.bot_stats(name, scope, 20)
    b, s = stats["bot"], stats["standing"] or {}
    latency, faults = stats["latency"], stats["faults"]
    by_id = {m.id: m for m in q.scope_matches(scope)}
    recent = "".join(
        f'<tr><th scope="row">{match_link(r["match"])}</th><td class="n">{num(r["place"])}</td>'
        f'<td class="n">{num(r["stars"])}</td><td class="n">{num(r["sum"])}</td>'
        f'{_seat_figures(by_id.get(r["match"]), b["name"])}'
        f'<td>{tournament_link(r["tournament_id"]) if r["tournament_id"] else "ladder"}</td>'
        f'<td>{when(r["finished_at"])}</td></tr>' for r in stats["recent"])
    history_rows = "".join(
        f'<tr><td>{match_link(h["match"])}</td><td class="n">{h["mu"]:.2f}</td>'
        f'<td class="n">{h["sigma"]:.2f}</td></tr>' for h in stats["rating_history"][-50:])
    main = f"""
<h1>Bot {e(b["name"])}</h1>
{_scope_nav(request, b["name"], scope)}
<dl class="facts"><dt>Kind</dt><dd>{e(b["kind"])}{_house_note(request, b["name"], scope)}</dd>
<dt>{"Registered" if q.registered_bot(b["name"]) else "First seen"}</dt>
<dd>{when(b["created_at"])}</dd>
{"<dt>Status</dt><dd>removed</dd>" if b["removed"] else ""}
<dt>Rank</dt><dd>{num(s.get("rank"))}</dd><dt>Matches</dt><dd>{stats["matches"]}</dd>
<dt>Stars per match</dt><dd>{num(stats["stars_per_match"])}</dd>
<dt>Rating</dt><dd>{e(rating_text(s.get("rating"), s.get("rating_mu"), s.get("rating_sigma")))}
<small>(μ − 3σ, then μ ± σ)</small></dd>
<dt>Faults</dt><dd>{faults["timeouts"]} timeouts, {faults["illegal"]} illegal,
{faults["disconnects"]} disconnects, {faults["autopilot_matches"]} matches on autopilot</dd>
<dt>Latency</dt><dd>{_latency_text(latency, stats["latency_matches"], b["kind"])}</dd></dl>
<div class="charts">
<section aria-labelledby="h-stars"><h2 id="h-stars">Stars per match</h2>
{bot_stars_chart(q.scope_matches(scope), b["name"])}
<p class="legend-note">Dots: stars won in that match; line: stars per match so far.</p>
</section>
<section aria-labelledby="h-rating"><h2 id="h-rating">Rating</h2>
{rating_chart(stats["rating_history"], b["name"])}
<p class="legend-note">Line: skill estimate μ after each match; band: μ ± σ.</p></section>
</div>
<details><summary>Rating history as a table (last 50)</summary>
<table><thead><tr><th scope="col">Match</th><th scope="col">μ</th><th scope="col">σ</th>
</tr></thead><tbody>{history_rows}</tbody></table></details>
{versions_section(request, b["name"])}
<section aria-labelledby="h-recent"><h2 id="h-recent">Recent matches</h2>
{_recent_table(recent)}
<p>{_all_matches_link(b["name"], scope)}</p></section>"""
    return _html(layout(f"Bot {b['name']}", main))


def _all_matches_link(name: str, scope: str) -> str:
    params = {"bot": name} if scope in (LADDER, ALL) else {"bot": name, "tournament": scope}
    where = "" if scope in (LADDER, ALL) else " in this tournament"
    return f'<a href="/matches?{e(urlencode(params))}">All matches of {e(name)}{where}</a>'


def _latency_text(latency: dict, matches: int, kind: str) -> str:
    if not latency["decisions"]:
        return "no timed decisions" + (" (house bots answer inside the server)"
                                       if kind == "house" else "")
    return (f'median {num(latency["median_ms"], 1)} ms, 90% under '
            f'{num(latency["p90_ms"], 1)} ms, max {num(latency["max_ms"], 1)} ms over '
            f'{latency["decisions"]} decisions (last {matches} matches)')


def _scope_nav(request: web.Request, name: str, scope: str) -> str:
    """Links to the bot's figures in the ladder, overall and per tournament."""
    scopes = [(ALL, "all matches"), (LADDER, "ladder")]
    scopes += [(tid, f"tournament {title}") for tid, title in
               request.app[QUERIES].bot_tournaments(name)]
    if scope not in {sc for sc, _ in scopes}:
        scopes.append((scope, f"tournament {scope}"))
    links = " · ".join(
        f'<a href="/bots/{u(name)}?scope={u(sc)}"'
        f'{" aria-current=page" if sc == scope else ""}>{e(label)}</a>' for sc, label in scopes)
    extra = "" if scope in (LADDER, ALL) else f" (the tournament's page: {tournament_link(scope)})"
    return f'<nav class="scopes" aria-label="Scope"><p>Figures for: {links}{extra}</p></nav>'


def _house_note(request: web.Request, name: str, scope: str) -> str:
    if not is_house_entrant(name):
        return ""
    seats = request.app[QUERIES].house_seat_names(name, scope)
    named = f" ({', '.join(e(n) for n in seats)})" if seats else ""
    return (f" — the arena's own bot; every seat it fills{named} counts for this one "
            "entrant, once per seat")


def _seat_figures(m: MatchRecord | None, name: str) -> str:
    """Faults and median latency of ``name``'s seats in one match, as cells."""
    seats = [i for i, who in enumerate(m.players) if who == name] if m else []
    faults = [m.faults[i] for i in seats if m and m.faults and i < len(m.faults)]
    samples = [v for i in seats if m and m.latency_ms and i < len(m.latency_ms)
               for v in m.latency_ms[i]]
    counts = [(sum(f.timeouts for f in faults), "timeout", "timeouts"),
              (sum(f.illegal for f in faults), "illegal", "illegal"),
              (sum(f.disconnects for f in faults), "drop", "drops")]
    text = ", ".join(f"{n} {one if n == 1 else many}" for n, one, many in counts if n)
    if any(f.autopilot for f in faults):
        text = (text + ", " if text else "") + "autopilot"
    median = statistics.median(samples) if samples else None
    return f'<td>{e(text or "—")}</td><td class="n">{num(median, 1)}</td>'


def _recent_table(rows: str) -> str:
    if not rows:
        return '<p class="empty">No finished matches in this scope.</p>'
    return ('<table class="recent"><thead><tr><th scope="col">Match</th>'
            '<th scope="col">Place</th><th scope="col">★</th><th scope="col">Score sum</th>'
            '<th scope="col">Faults</th><th scope="col">Median latency (ms)</th>'
            '<th scope="col">Where</th><th scope="col">Finished</th></tr></thead>'
            f'<tbody>{rows}</tbody></table>')


# -- documents ------------------------------------------------------------------
async def _document(request: web.Request, name: str) -> web.Response:
    try:
        title, body = docs.render_document(name)
    except docs.DocumentMissingError as err:
        raise ApiError(404, str(err)) from None
    source = docs.DOCUMENTS[name].path
    main = (f'<article class="doc">{body}</article>'
            f'<p class="legend-note">Rendered from <code>{e(source)}</code>.</p>')
    return _html(layout(title, main))


@routes.get("/rules")
async def rules(request: web.Request) -> web.Response:
    return await _document(request, "rules")


@routes.get("/protocol")
async def protocol(request: web.Request) -> web.Response:
    return await _document(request, "protocol")


@routes.get("/docs/api")
async def api_document(request: web.Request) -> web.Response:
    return await _document(request, "api")
