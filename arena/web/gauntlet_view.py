"""A gauntlet on its tournament page: the decision so far, why it stopped,
the rule and the result per field member (arena/tournament/gauntlet_play.py
computes it; the API record carries the same as ``gauntlet``). The section
is a partial, refetched live like the standings."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from arena.web.errors import check_name
from arena.web.keys import QUERIES
from arena.web.render import e, live_section, u

routes = web.RouteTableDef()

VERDICTS = {"continue": "Playing", "better": "Better than the field",
            "worse": "Behind the field", "even": "No difference found",
            "capped": "Stopped at the cap"}


def gauntlet_fragment(g: dict[str, Any]) -> str:
    """The section's content for a ``gauntlet`` record of the API."""
    wins, losses = g["wins"]
    rows = "".join(
        f'<tr><th scope="row">{e(r["opponent"])}</th><td>{r["deck_sets"]}</td>'
        f'<td>{r["wins"]}</td><td>{r["losses"]}</td><td>{r["ties"]}</td>'
        f'<td>{r["p_value"]:.4g}</td></tr>' for r in g["opponents"])
    return (f'<p><strong id="gauntlet-verdict" data-verdict="{e(g["verdict"])}">'
            f'{e(VERDICTS.get(g["verdict"], g["verdict"]))}</strong>: {e(g["reason"])}.</p>'
            f'<dl class="facts"><dt>Challenger</dt><dd>{e(g["challenger"])}</dd>'
            f'<dt>Deck sets</dt><dd>{g["deck_sets"]} played ({wins} won, {losses} lost, '
            f'{g["ties"]} tied), at most {g["max_sets"]}</dd>'
            f'<dt>Rule</dt><dd>{e(g["method"])}: error rate {g["alpha"]:g}, effect '
            f'{g["effect"]:g} (log likelihood ratios {g["llr"][0]:g} better, '
            f'{g["llr"][1]:g} worse)</dd></dl>'
            f'<table class="gauntlet"><caption>The challenger against each field member, '
            f'over the deck sets they shared (sign test)</caption><thead><tr>'
            f'<th scope="col">Opponent</th><th scope="col">Deck sets</th>'
            f'<th scope="col">Won</th><th scope="col">Lost</th><th scope="col">Tied</th>'
            f'<th scope="col">p</th></tr></thead><tbody>{rows}</tbody></table>')


def gauntlet_section(tid: str, g: dict[str, Any] | None) -> str:
    """The page's section; empty for a tournament of another kind."""
    if not g:
        return ""
    return live_section("gauntlet", "Gauntlet", f"/partials/gauntlet?tournament={u(tid)}",
                        gauntlet_fragment(g))


def format_fact(progress: dict[str, Any]) -> str:
    if "max_sets" not in progress:
        return ""
    return (f'<dt>Format</dt><dd>Gauntlet, deck set <span id="gauntlet-set">{progress["set"]}'
            f'</span> of at most {progress["max_sets"]}</dd>')


@routes.get("/partials/gauntlet")
async def gauntlet_partial(request: web.Request) -> web.Response:
    tid = check_name(request.query.get("tournament"), "tournament id")
    q = request.app[QUERIES]
    t = await q.run(q.get_tournament, tid)
    return web.Response(text=gauntlet_fragment(t["gauntlet"]) if t.get("gauntlet") else "",
                        content_type="text/html")
