"""Server-side HTML pieces: the layout, tables and the rating chart.

Every value goes through :func:`e` (HTML escaping) on its way in; the pages
work without JavaScript, which only adds live updates and the replay viewer.
"""

from __future__ import annotations

import datetime as dt
import html
import http
import string
from collections.abc import Collection
from functools import cache
from importlib import resources
from typing import Any
from urllib.parse import quote, urlencode

from arena.web.charts import Series, line_chart
from arena.web.entrants import entrant_of, is_house_entrant
from arena.web.ladders import figure_columns, primary_result

Wire = dict[str, Any]


def e(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def u(value: str) -> str:
    """A path segment."""
    return quote(value, safe="")


@cache
def _template(name: str) -> string.Template:
    text = resources.files("arena.web").joinpath("templates", name).read_text("utf-8")
    return string.Template(text)


def layout(title: str, main: str, *, scripts: tuple[str, ...] = (),
           footer: str = "") -> str:
    tags = "\n".join(f'<script src="/static/{e(s)}" defer></script>' for s in scripts)
    return _template("base.html").substitute(title=e(title), main=main, scripts=tags,
                                             footer=footer)


def live_section(key: str, title: str, partial: str, content: str, *, box: str | None = None,
                 after: str = "") -> str:
    """A page section whose content live.js refetches: the heading
    ``h-KEY`` names the section for screen readers; the box (id ``box``,
    else ``key``) holds ``content`` and is redrawn from the ``partial`` URL
    when the page's live channel says it changed. ``after``: markup that
    stays below the box (links), not refetched."""
    return (f'<section aria-labelledby="h-{key}"><h2 id="h-{key}">{e(title)}</h2>\n'
            f'<div id="{box or key}" data-partial="{partial}">\n{content}</div>{after}</section>')


def error_page(status: int, message: str) -> str:
    """An error as a page of the site: what happened and where to go on."""
    try:
        title = http.HTTPStatus(status).phrase.capitalize()
    except ValueError:
        title = f"Error {status}"
    main = (f'<h1>{e(title)}</h1><p class="error-message">{e(message)}</p>'
            f'<p><small>HTTP {status}</small> · <a href="/">Standings</a> · '
            '<a href="/matches">All matches</a></p>')
    return layout(title, main)


def when(ts: float | None) -> str:
    if ts is None:
        return "—"
    moment = dt.datetime.fromtimestamp(ts, tz=dt.timezone.utc)
    return (f'<time datetime="{moment.isoformat(timespec="seconds")}">'
            f'{moment.strftime("%Y-%m-%d %H:%M:%S")} UTC</time>')


def num(value: Any, digits: int = 2) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return e(value)


def bot_link(name: str, scope: str | None = None) -> str:
    """A link to the page of the entrant ``name`` plays for (a house seat's
    page is its strategy's), optionally within one scope."""
    query = f"?scope={u(scope)}" if scope else ""
    return f'<a href="/bots/{u(entrant_of(name))}{query}">{e(name)}</a>'


def person_link(name: str) -> str:
    """A link to a person's page (people play on the web, they are no bots)."""
    return f'<a href="/people/{u(name)}">{e(name)}</a>'


def rating_text(ordinal: float | None, mu: float | None, sigma: float | None) -> str:
    """One format everywhere: the conservative rating, then μ ± σ."""
    if ordinal is None or mu is None or sigma is None:
        return "—"
    return f"{ordinal:.1f} ({mu:.1f} ± {sigma:.1f})"


RATING_NOTE = (
    "Rating: the conservative skill "
    "estimate μ − 3σ (openskill Plackett–Luce over places), with μ ± σ in brackets; it "
    "does not decide the rank. Latency: median time a bot took to answer, in "
    "milliseconds.")


def match_link(match_id: str, text: str | None = None) -> str:
    return f'<a href="/matches/{u(match_id)}">{e(text or match_id)}</a>'


def tournament_link(tid: str, text: str | None = None) -> str:
    return f'<a href="/tournaments/{u(tid)}">{e(text or tid)}</a>'


# -- standings ---------------------------------------------------------------
_HEAD: list[tuple[str, str, str]] = [
    # key, header, title (long form for assistive tech / tooltips)
    ("rank", "#", "Rank"),
    ("bot", "Bot", "Bot"),
    ("matches", "Matches", "Finished matches"),
]
_TAIL: list[tuple[str, str, str]] = [  # after the game's own figures
    ("wins", "Wins", "Matches ranked first"),
    ("avg_place", "Avg place", "Average place"),
    ("rating", "Rating", "Conservative rating μ − 3σ, then (μ ± σ); it does not rank"),
    ("timeouts", "Timeouts", "Decisions defaulted at the deadline"),
    ("illegal", "Illegal", "Illegal answers"),
    ("disconnects", "Drops", "Disconnections while seated"),
    ("median_latency_ms", "Latency (ms)", "Median decision latency in milliseconds"),
]
_SEPARATION = ("vs_next", "vs next", "Is the gap to the next bot significant yet?")


def separation_text(vs_next: Wire | None) -> str:
    """The ``vs_next`` figure of a standings row (the gap to the row below):
    one word in the cell, the test's detail on hover (``title``; the API's
    ``vs_next`` carries the same figures)."""
    if not vs_next:
        return ""
    method = vs_next.get("method") or "test"
    p = vs_next.get("p_value")
    p_text = f"p = {p:.3g}" if isinstance(p, (int, float)) else "p unknown"
    if vs_next.get("significant"):
        detail = f"ahead of the next bot: {p_text}, {method}"
        return f'<span class="sig yes" title="{e(detail)}">separated</span>'
    more = vs_next.get("more_matches")
    hint = (f"; about {int(more)} more matches would likely separate them"
            if isinstance(more, (int, float)) else "")
    detail = f"not significantly ahead of the next bot yet: {p_text}, {method}{hint}"
    return f'<span class="sig no" title="{e(detail)}">not yet</span>'


def _row_value(row: Wire, key: str) -> Any:
    if key.startswith("figures."):
        return (row.get("figures") or {}).get(key.removeprefix("figures."))
    return row.get(key)


def standings_table(rows: list[Wire], caption: str, scope: str | None = None,
                    game: str | None = None, people: Collection[str] = ()) -> str:
    """The standings of one game (its columns from its ranking descriptor;
    ``game`` None: the rows' own game); bot links stay in ``scope``, the
    names in ``people`` link to their person's page; a "vs next" column
    when the rows carry ``vs_next``."""
    if not rows:
        return f'<p class="empty">No finished matches yet for {e(caption.lower())}.</p>'
    figures = figure_columns(game or rows[0].get("game"))
    ci = {c.key: c.ci for c in figures.columns if c.ci}
    columns = _HEAD + [(c.key, c.header, c.title) for c in figures.columns] + _TAIL
    if any(r.get("vs_next") for r in rows):
        at = next(i for i, (key, _, _) in enumerate(columns) if key == "rating") + 1
        columns.insert(at, _SEPARATION)
    head = "".join(f'<th scope="col" title="{e(t)}"><abbr title="{e(t)}">{e(h)}</abbr></th>'
                   if h != t else f'<th scope="col">{e(h)}</th>' for _, h, t in columns)
    body = []
    for r in rows:
        cells = []
        for key, _, _ in columns:
            if key == "bot":
                who = str(r.get("bot"))
                link = person_link(who) if who in people else bot_link(who, scope)
                cells.append(f'<th scope="row">{link}</th>')
            elif key == "vs_next":
                cls = "sep" if not r.get("vs_next") else \
                    f'sep {"yes" if r["vs_next"].get("significant") else "no"}'
                cells.append(f'<td class="{cls}">{separation_text(r.get("vs_next"))}</td>')
            elif key in ci:
                lo, hi = (r.get(k) for k in ci[key])
                interval = f' <small>[{num(lo)}, {num(hi)}]</small>' if lo is not None else ""
                cells.append(f'<td class="n">{num(r.get(key))}{interval}</td>')
            elif key == "rating":
                text = rating_text(r.get("rating"), r.get("rating_mu"), r.get("rating_sigma"))
                cells.append(f'<td class="n">{e(text)}</td>')
            elif key == "median_latency_ms":
                cells.append(f'<td class="n">{num(r.get(key), 1)}</td>')
            else:
                cells.append(f'<td class="n">{num(_row_value(r, key))}</td>')
        body.append(f'<tr data-bot="{e(r.get("bot"))}">{"".join(cells)}</tr>')
    note = f"{figures.note} {RATING_NOTE}"
    return (f'<table class="standings"><caption>{e(caption)}</caption>'
            f'<thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'
            f'<p class="legend-note">{e(note)}{_house_note(rows)}</p>')


def _house_note(rows: list[Wire]) -> str:
    house = [str(r.get("bot")) for r in rows if is_house_entrant(str(r.get("bot")))]
    if not house:
        return ""
    return e(f" {', '.join(house)}: the arena's own bots that fill empty seats, one entrant "
             "per strategy, counted once per seat they held (a match with three house seats "
             "counts three times).")


# -- matches -------------------------------------------------------------------
def matches_table(matches: list[Wire], caption: str,
                  empty: str = "No match has been played yet.") -> str:
    if not matches:
        return f'<p class="empty">{e(empty)}</p>'
    rows = []
    for m in matches:
        result = m.get("result") or {}
        ranks = result.get("ranks") or []
        figure = primary_result(m.get("game"))
        won = result.get(figure.result_key) or []
        players = []
        for seat, name in enumerate(m.get("players") or []):
            extra = ""
            if seat < len(ranks):
                value = won[seat] if seat < len(won) else 0
                extra = f" <small>(place {e(ranks[seat])}, {e(value)}{e(figure.suffix)})</small>"
            players.append(f"<li>{bot_link(name)}{extra}</li>")
        tid = m.get("tournament_id")
        rows.append(
            f'<tr><th scope="row">{match_link(m["id"])}</th>'
            f'<td><span class="status {e(m["status"])}">{e(m["status"])}</span></td>'
            f'<td><ol class="players" start="0">{"".join(players)}</ol></td>'
            f'<td>{tournament_link(tid) if tid else "ladder"}</td>'
            f'<td>{when(m.get("finished_at") or m.get("started_at"))}</td></tr>')
    return (f'<table class="matches"><caption>{e(caption)}</caption><thead><tr>'
            '<th scope="col">Match</th><th scope="col">Status</th>'
            '<th scope="col">Players (seat order)</th><th scope="col">Where</th>'
            '<th scope="col">When</th></tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table>')


def pager(path: str, params: dict[str, str], total: int, limit: int, offset: int) -> str:
    if total <= limit:
        return ""
    links = []
    if offset > 0:
        q = urlencode({**params, "offset": max(0, offset - limit)})
        links.append(f'<a rel="prev" href="{e(path)}?{e(q)}">← Newer</a>')
    links.append(f"<span>{offset + 1}–{min(total, offset + limit)} of {total}</span>")
    if offset + limit < total:
        q = urlencode({**params, "offset": offset + limit})
        links.append(f'<a rel="next" href="{e(path)}?{e(q)}">Older →</a>')
    return f'<nav class="pager" aria-label="Pages">{" ".join(links)}</nav>'


def progress_bar(done: int, total: int, element_id: str = "progress") -> str:
    return (f'<p><label for="{e(element_id)}">Progress</label> '
            f'<progress id="{e(element_id)}" max="{max(total, 1)}" value="{done}">'
            f'{done}/{total}</progress> <span id="{e(element_id)}-text">'
            f'{done} of {total} matches played</span></p>')


def waiting_note(waiting: Wire | None) -> str:
    """What an open tournament waits for, and where the bots it needs are
    connected (empty when it waits for nothing)."""
    if not waiting:
        return ""
    where = "".join(
        f"<li>{bot_link(x['name'])}: "
        + (f"connected to {e(', '.join(x['connected_to']))}" if x["connected_to"]
           else "not connected") + "</li>"
        for x in waiting.get("entrants") or [])
    return (f'<section class="waiting" aria-label="waiting for"><p>This tournament is '
            f'waiting for: {e(waiting["reason"])}</p>'
            + (f"<ul>{where}</ul>" if where else "") + "</section>")


def live_list(live: list[Wire]) -> str:
    if not live:
        return '<p class="empty">No match is being played right now.</p>'
    items = []
    for m in live:
        players = ", ".join(bot_link(p) for p in m.get("players") or [])
        items.append(f'<li>{match_link(m["id"])} <span class="status running">live</span> '
                     f'<small>{players}</small></li>')
    return f'<ul class="live">{"".join(items)}</ul>'


# -- rating chart --------------------------------------------------------------------
def rating_chart(history: list[Wire], bot: str, width: int = 640, height: int = 240,
                 ident: str = "chart") -> str:
    """Inline SVG: mu over the bot's matches with a mu ± sigma band."""
    if not history:
        return '<p class="empty">No rated matches yet.</p>'
    mus = [float(h["mu"]) for h in history]
    sigmas = [float(h["sigma"]) for h in history]
    xs = range(1, len(history) + 1)
    line = Series(bot, list(zip(xs, mus)),
                  band=[(x, m - s, m + s) for x, m, s in zip(xs, mus, sigmas)],
                  marks=[(x, m, f"{h['match']}: {m:.2f} ± {s:.2f}")
                         for x, h, m, s in zip(xs, history, mus, sigmas)],
                  summary=f"Rating of {bot} over {len(history)} matches: from {mus[0]:.1f} "
                          f"to {mus[-1]:.1f}, lowest {min(mus):.1f}, highest {max(mus):.1f}.")
    return line_chart(f"Rating history of {bot}", [line], ident=ident, width=width,
                      height=height, x_label="its matches (oldest → newest)",
                      y_label="rating μ (band: ± σ)")
