"""The play pages: ``/play/muushig`` and ``/play/thirteen``.

The page is static markup and ``play.js``: it keeps the person's token in
the browser, sits at a table through the play API (``arena.web.play``),
reads the seat's messages and shows them -- the person's own cards, the
trump and the trick (Muushig) or three rows to fill (thirteen), the time
left -- and offers each legal action as a ``button`` whose ``data-action``
holds its wire value. It shows nothing the seat's messages do not hold.
"""

from __future__ import annotations

from aiohttp import web

from arena.games import game_names
from arena.web.errors import ApiError
from arena.people import PEOPLE
from arena.web.api import server_game
from arena.web.ladder_view import LadderSet, ladder_sections
from arena.web.ladders import game_title, ladder_games
from arena.web.render import e, layout

routes = web.RouteTableDef()


def play_links() -> str:
    """The home page's "Play" entries, one per game."""
    items = "".join(f'<li><a href="/play/{e(g)}">Play {e(game_title(g))}</a></li>'
                    for g in sorted(game_names()))
    return (f'<section aria-labelledby="h-play"><h2 id="h-play">Play</h2>'
            f'<p>Take a seat against the house bots.</p><ul class="play-links">{items}</ul>'
            f'<p><a href="/#h-people">People\'s ladders</a></p></section>')


def people_ladders(request: web.Request) -> str:
    """The people's ladders, one per game, beside the bots': matches with
    a person only (they never count on the bots' ladder or in tournaments)."""
    return ladder_sections(request, LadderSet(
        scope=PEOPLE, key="people", box="people", title="People's ladders",
        intro="<p>Matches with a person at the table, rated like the bots' (people and "
              "the bots they met).</p>",
        section_id="people-ladders"), ladder_games(server_game(request)))


@routes.get("/play/{game}")
async def play_page(request: web.Request) -> web.Response:
    game = request.match_info["game"]
    if game not in game_names():
        raise ApiError(404, f"no game {game[:40]!r} here")
    title = f"Play {game_title(game)}"
    main = f"""<h1>{e(title)}</h1>
<div id="play" class="play" data-game="{e(game)}">
<section id="who" aria-labelledby="h-who"><h2 id="h-who" class="visually-hidden">Who plays</h2>
<form id="name-form" hidden>
<label for="name">Your name (letters, digits, '_', '.', '-')</label>
<input id="name" name="name" required maxlength="32" pattern="[A-Za-z0-9_.\\-]+" autocomplete="nickname">
<button type="submit">Take this name</button>
</form>
<p id="me" hidden></p>
<fieldset id="choice" class="play-choice" hidden><legend>Who plays at your table</legend>
<div id="choice-options"></div></fieldset>
<button id="sit" type="button" hidden>Sit at a table</button>
</section>
<p id="status" class="play-status" role="status" aria-live="polite"></p>
<section id="table" class="play-table" aria-labelledby="h-table" hidden>
<h2 id="h-table">Your table</h2>
<p id="clock" class="clock" aria-live="off"></p>
<ol id="seats" class="play-seats"></ol>
<div id="board" class="play-board"></div>
<h3 id="h-hand">Your cards</h3>
<div id="hand" class="play-hand" aria-labelledby="h-hand"></div>
<div id="actions" class="play-actions" role="group" aria-label="Your move"></div>
<h3>What happened</h3>
<ol id="log" class="play-log" aria-live="polite"></ol>
</section>
<div id="over"></div>
</div>"""
    return web.Response(text=layout(title, main, scripts=("common.js", "play_thirteen.js", "play.js")),
                        content_type="text/html", headers={"Cache-Control": "no-cache"})
