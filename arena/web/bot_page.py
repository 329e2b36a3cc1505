"""The bot page's pieces: its figures in one game, its scopes, its recent
matches (rendered from :class:`~arena.web.queries.Queries`, synchronously,
like the page handler in :mod:`arena.web.pages`)."""

from __future__ import annotations

import statistics
from typing import Any
from urllib.parse import urlencode

from aiohttp import web

from arena.storage.base import MatchRecord
from arena.web.entrants import is_house_entrant
from arena.web.keys import QUERIES
from arena.web.ladders import FigureColumns, figure_columns, game_title
from arena.live import LADDER
from arena.web.plots import bot_stars_chart
from arena.web.queries import ALL
from arena.web.render import (
    e,
    match_link,
    num,
    rating_chart,
    rating_text,
    tournament_link,
    u,
    when,
)


def bot_game_section(request: web.Request, name: str, scope: str, game: str,
                      several: bool) -> str:
    """A bot's figures in one game: rank, figure per match, rating, faults,
    latency, charts and recent matches. ``several``: the bot played other
    games too, so the section says which game it is about."""
    q = request.app[QUERIES]
    stats = q.bot_stats(name, scope, 20, game)
    b, s = stats["bot"], stats["standing"] or {}
    latency, faults = stats["latency"], stats["faults"]
    figures = figure_columns(game)
    figure_name = figures.points_name.capitalize()
    per_match = stats["stars_per_match"] if figures.per_match_key == "stars_per_match" \
        else stats["points_per_match"]
    by_id = {m.id: m for m in q.scope_matches(scope, game)}
    recent = "".join(
        f'<tr><th scope="row">{match_link(r["match"])}</th><td class="n">{num(r["place"])}</td>'
        + "".join(f'<td class="n">{num(v)}</td>' for v in recent_figures(r, figures))
        + f'{seat_figures(by_id.get(r["match"]), b["name"])}'
        f'<td>{tournament_link(r["tournament_id"]) if r["tournament_id"] else "ladder"}</td>'
        f'<td>{when(r["finished_at"])}</td></tr>' for r in stats["recent"])
    history_rows = "".join(
        f'<tr><td>{match_link(h["match"])}</td><td class="n">{h["mu"]:.2f}</td>'
        f'<td class="n">{h["sigma"]:.2f}</td></tr>' for h in stats["rating_history"][-50:])
    suffix = f"-{game}" if several else ""
    # A house entrant counts once per seat it held, in the standings as here.
    held = sum(1 for m in by_id.values() if b["name"] in m.players)
    count = (str(stats["matches"]) if held in (0, stats["matches"])
             else f'{stats["matches"]} <small>(seats, in {held} matches)</small>')
    body = f"""
<dl class="facts">
<dt>Rank</dt><dd>{num(s.get("rank"))}</dd><dt>Matches</dt><dd>{count}</dd>
<dt>{e(figure_name)} per match</dt><dd>{num(per_match)}</dd>
<dt>Rating</dt><dd>{e(rating_text(s.get("rating"), s.get("rating_mu"), s.get("rating_sigma")))}
<small>(μ − 3σ, then μ ± σ)</small></dd>
<dt>Faults</dt><dd>{faults["timeouts"]} timeouts, {faults["illegal"]} illegal,
{faults["disconnects"]} disconnects, {faults["autopilot_matches"]} matches on autopilot</dd>
<dt>Latency</dt><dd>{latency_text(latency, stats["latency_matches"], b["kind"])}</dd></dl>
<div class="charts">
<section aria-labelledby="h-stars{e(suffix)}"><h2 id="h-stars{e(suffix)}">{e(figure_name)} per match</h2>
{bot_stars_chart(q.scope_matches(scope, game), b["name"], game, ident="stars" + suffix)}
<p class="legend-note">Dots: {e(figures.points_name)} won in that match; line: {e(figures.points_name)} per match so far.</p>
</section>
<section aria-labelledby="h-rating{e(suffix)}"><h2 id="h-rating{e(suffix)}">Rating</h2>
{rating_chart(stats["rating_history"], b["name"], ident="chart" + suffix)}
<p class="legend-note">Line: skill estimate μ after each match; band: μ ± σ.</p></section>
</div>
<details><summary>Rating history as a table (last 50)</summary>
<table><thead><tr><th scope="col">Match</th><th scope="col">μ</th><th scope="col">σ</th>
</tr></thead><tbody>{history_rows}</tbody></table></details>
<section aria-labelledby="h-recent{e(suffix)}"><h2 id="h-recent{e(suffix)}">Recent matches</h2>
{recent_table(recent, figures)}</section>"""
    if not several:
        return body
    return (f'<section id="game-{e(game)}" class="bot-game" data-game="{e(game)}" '
            f'aria-labelledby="h-game-{e(game)}"><h2 id="h-game-{e(game)}">'
            f'{e(game_title(game))}</h2>{body}</section>')


def recent_figures(line: dict[str, Any], figures: FigureColumns) -> list[Any]:
    """A recent match's figures, one per column of the game's recent table."""
    if figures.per_match_key == "stars_per_match":
        return [line["stars"], line["sum"]]
    return [line["points"]]


def all_matches_link(name: str, scope: str) -> str:
    params = {"bot": name} if scope in (LADDER, ALL) else {"bot": name, "tournament": scope}
    where = "" if scope in (LADDER, ALL) else " in this tournament"
    return f'<a href="/matches?{e(urlencode(params))}">All matches of {e(name)}{where}</a>'


def latency_text(latency: dict, matches: int, kind: str) -> str:
    if not latency["decisions"]:
        return "no timed decisions" + (" (house bots answer inside the server)"
                                       if kind == "house" else "")
    return (f'median {num(latency["median_ms"], 1)} ms, 90% under '
            f'{num(latency["p90_ms"], 1)} ms, max {num(latency["max_ms"], 1)} ms over '
            f'{latency["decisions"]} decisions (last {matches} matches)')


def scope_nav(request: web.Request, name: str, scope: str) -> str:
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


def house_note(request: web.Request, name: str, scope: str) -> str:
    if not is_house_entrant(name):
        return ""
    seats = request.app[QUERIES].house_seat_names(name, scope)
    named = f" ({', '.join(e(n) for n in seats)})" if seats else ""
    return (f" — the arena's own bot; every seat it fills{named} counts for this one "
            "entrant, once per seat")


def seat_figures(m: MatchRecord | None, name: str) -> str:
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


def recent_table(rows: str, figures: FigureColumns) -> str:
    if not rows:
        return '<p class="empty">No finished matches in this scope.</p>'
    if figures.per_match_key == "stars_per_match":
        heads = '<th scope="col">★</th><th scope="col">Score sum</th>'
    else:
        heads = f'<th scope="col">{e(figures.columns[0].header)}</th>'
    return ('<table class="recent"><thead><tr><th scope="col">Match</th>'
            f'<th scope="col">Place</th>{heads}'
            '<th scope="col">Faults</th><th scope="col">Median latency (ms)</th>'
            '<th scope="col">Where</th><th scope="col">Finished</th></tr></thead>'
            f'<tbody>{rows}</tbody></table>')
