"""The home page's ladders, one renderer for both kinds: the bots' ladders
(matches outside tournaments) and the people's (matches with a person).

Each game's table sits in a ``section.ladder`` whose container has a
``data-partial`` URL; ``static/live.js`` refetches every such container when
the standings change, so both kinds update without a reload as long as they
are drawn here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlencode

from aiohttp import web

from arena.live import LADDER
from arena.people import PEOPLE
from arena.storage.base import Wire
from arena.web.keys import QUERIES
from arena.web.queries import Queries
from arena.web.ladders import game_title
from arena.web.render import e, standings_table


def standings_fragment(request: web.Request, scope: str, game: str,
                       several: bool = False, people: frozenset[str] | None = None) -> str:
    """One game's standings in ``scope``; ``several``: the page shows other
    games' too, so the caption names this one. ``people``: the names among
    the rows that are people, when the page read them already."""
    caption = "Ladder (matches outside tournaments)" if scope == LADDER else "Standings"
    if scope == PEOPLE:
        caption = f"{game_title(game)}: people and the bots they met"
    elif several:
        caption = f"{game_title(game)} ladder (matches outside tournaments)" \
            if scope == LADDER else f"{game_title(game)} standings"
    q = request.app[QUERIES]
    rows = q.standings(scope, game)
    if people is None:
        people = _people(q, scope, [rows])
    return standings_table(rows, caption, scope, game, people)


def _people(q: Queries, scope: str, tables: list[list[Wire]]) -> frozenset[str]:
    """The people's ladder links each person to their own page: who of its
    lines is a person, in one read of the store for every table given (a
    read per line made a page of a thousand lines a thousand reads)."""
    if scope != PEOPLE:
        return frozenset()
    return frozenset(q.store.people_among({r["bot"] for rows in tables for r in rows}))


@dataclass(frozen=True)
class LadderSet:
    """One kind of ladder, one table per game, under one heading."""

    scope: str  # the standings scope: LADDER or PEOPLE
    key: str  # heading ids: h-{key} for the set, h-{key}-{game} for a game
    box: str  # each game's refetched container: id {box}-{game}
    title: str  # the set's heading
    intro: str = ""  # markup between the heading and the tables
    section_id: str = ""  # the set's own id, when a link points at it
    game_ids: bool = False  # each game's section is a link target: id {key}-{game}
    footer: Callable[[str], str] | None = None  # markup after a game's table


def ladder_sections(request: web.Request, ladders: LadderSet, games: list[str]) -> str:
    """The set's section: its heading, then one section per game (in
    ``games`` order) holding that game's standings in a live container."""
    q = request.app[QUERIES]
    people = _people(q, ladders.scope, [q.standings(ladders.scope, g) for g in games])

    def one(game: str) -> str:
        own_id = f'id="{ladders.key}-{e(game)}" ' if ladders.game_ids else ""
        query = e(urlencode({"scope": ladders.scope, "game": game}))
        return (f'<section {own_id}class="ladder" data-game="{e(game)}" '
                f'aria-labelledby="h-{ladders.key}-{e(game)}">'
                f'<h3 id="h-{ladders.key}-{e(game)}">{e(game_title(game))}</h3>'
                f'<div id="{ladders.box}-{e(game)}" data-partial="/partials/standings?{query}">'
                f'{standings_fragment(request, ladders.scope, game, several=True, people=people)}</div>'
                f'{ladders.footer(game) if ladders.footer else ""}</section>')

    set_id = f' id="{ladders.section_id}"' if ladders.section_id else ""
    return (f'<section{set_id} aria-labelledby="h-{ladders.key}"><h2 id="h-{ladders.key}">'
            f'{ladders.title}</h2>{ladders.intro}{"".join(one(g) for g in games)}</section>')
