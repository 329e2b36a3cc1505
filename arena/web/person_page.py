"""A person's page, ``/people/{name}``: per game they played, their line on
the people's ladder (rank, figure per match with its bootstrap interval,
rating μ − 3σ with μ ± σ), then the figures a bot's page shows (charts,
faults, latency, recent matches, each linking to its replay).

It reads finished matches only, plus the id of the table the person sits
at now, linked to that match's public page (what any spectator sees: the
moves made public, never a hand): the page never holds a card of a
running match. The people's ladder links people here, and ``/bots/{name}``
of a person leads here.
"""

from __future__ import annotations

from aiohttp import web

from arena.games import game_names
from arena.people import PEOPLE
from arena.web.bot_page import all_matches_link, bot_game_section
from arena.web.errors import ApiError, check_name
from arena.web.keys import QUERIES
from arena.web.ladders import game_title
from arena.web.play import PEOPLE_TABLES, PERSON
from arena.web.render import e, layout, match_link, standings_table, u, when

routes = web.RouteTableDef()


@routes.get("/people/{name}")
async def person(request: web.Request) -> web.Response:
    """(never awaits: it runs on a read thread, as the other pages do)"""
    name = check_name(request.match_info["name"], "a person's name")
    q = request.app[QUERIES]
    record = q.registered_bot(name)
    if record is None or record.kind != PERSON:
        raise ApiError(404, f"no person plays here as {name!r} (a bot's page is "
                            f"/bots/{name})")
    games = q.bot_games(name, PEOPLE)
    sections = "".join(_game_section(request, name, game) for game in games) or \
        '<p class="empty">No finished matches yet.</p>'
    held = request.app[PEOPLE_TABLES].playing(name)
    now = ""
    if held is not None:
        now = (f"<dt>Playing now</dt><dd>{e(game_title(held.game))}, "
               f"{match_link(held.match_id)} <small>(what any spectator sees)</small></dd>")
    plays = " · ".join(f'<a href="/play/{e(g)}">Play {e(game_title(g))}</a>'
                       for g in sorted(game_names()))
    main = f"""
<h1>Person {e(name)}</h1>
<dl class="facts"><dt>Plays here since</dt><dd>{when(record.created_at)}</dd>
{"<dt>Status</dt><dd>removed</dd>" if record.removed else ""}{now}</dl>
<p>{plays} · <a href="/#people-ladders">People's ladders</a></p>
{sections}
<p>{all_matches_link(name, PEOPLE)}</p>"""
    return web.Response(text=layout(f"Person {name}", main), content_type="text/html")


def _game_section(request: web.Request, name: str, game: str) -> str:
    rows = [r for r in request.app[QUERIES].standings(PEOPLE, game) if r.get("bot") == name]
    line = standings_table(rows, f"{name} on the people's ladder of {game_title(game)}",
                           PEOPLE, game, people=frozenset({name}))
    return (f'<section id="game-{e(game)}" class="bot-game" data-game="{e(game)}" '
            f'aria-labelledby="h-game-{e(game)}"><h2 id="h-game-{e(game)}">'
            f'{e(game_title(game))}</h2>{line}'
            f'{bot_game_section(request, name, PEOPLE, game, several=False)}'
            f'<p><a href="/?game={u(game)}#people-ladders">The whole ladder</a></p></section>')
