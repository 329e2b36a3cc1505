"""A person's own page, ``/people/{name}``: their matches per game, their
rating with its interval, links to the replays; linked from the people's
ladder (and the bots' pages of a person lead there); never a hidden card of
the match they are playing. On both stores."""

from __future__ import annotations

import random
import re
from pathlib import Path

import aiohttp

from tests.people.helpers import hidden_cards, people_site, play_as_person, random_legal

TOKEN = re.compile(r"[A-Za-z0-9]+")


async def _get(http: aiohttp.ClientSession, url: str) -> tuple[int, str]:
    async with http.get(url, allow_redirects=False) as r:
        return r.status, (r.headers.get("Location") or await r.text())


async def test_a_persons_page_shows_their_matches_rating_and_replays(
        tmp_path: Path, db_location: str) -> None:
    async with people_site(tmp_path, db_location) as site:
        arena, base, http = site.arena, site.base, site.http
        token = await site.person("oyun")
        table, _ = await play_as_person(http, base, token, "muushig",
                                        random_legal(random.Random(5)))
        await arena.server.writer.flush()
        status, page = await _get(http, f"{base}/people/oyun")
        assert status == 200, page
        assert "<h1>Person oyun</h1>" in page
        assert 'data-game="muushig"' in page or "Muushig" in page
        assert f'href="/matches/{table["match"]}"' in page  # its replay
        rating = re.search(r"<dt>Rating</dt><dd>([^<]*)", page)
        assert rating is not None and "±" in rating.group(1), page
        assert "<dt>Matches</dt><dd>1</dd>" in page
        assert 'href="/play/muushig"' in page  # play again
        # The people's ladder links the person here, the bots they met
        # to the bots' pages.
        status, home = await _get(http, f"{base}/")
        people_part = home[home.index('id="people-ladders"'):home.index('id="h-tournaments"')]
        assert 'href="/people/oyun' in people_part and 'href="/bots/oyun' not in people_part
        assert 'href="/bots/house-' in people_part
        status, partial = await _get(
            http, f"{base}/partials/standings?scope=people&game=muushig")
        assert 'href="/people/oyun' in partial and 'href="/bots/oyun' not in partial
        # A person's name under /bots/ leads to their page.
        status, where = await _get(http, f"{base}/bots/oyun")
        assert status == 302 and where.startswith("/people/oyun"), (status, where)
        # Nobody else has a person's page.
        status, page = await _get(http, f"{base}/people/house-heuristic")
        assert status == 404 and "/bots/house-heuristic" in page
        status, page = await _get(http, f"{base}/people/nobody-here")
        assert status == 404


async def test_a_persons_page_shows_no_card_of_their_running_match(tmp_path: Path,
                                                                  db_location: str) -> None:
    async with people_site(tmp_path, db_location) as site:
        arena, store, base, http = site.arena, site.store, site.base, site.http
        token = await site.person("saran")
        table, seen = await play_as_person(http, base, token, "thirteen",
                                           random_legal(random.Random(9)), stop_after=1)
        assert not arena.server.tables[table["match"]].session.over
        await arena.server.writer.flush()
        status, page = await _get(http, f"{base}/people/saran")
        assert status == 200, page
        assert f'href="/matches/{table["match"]}"' in page  # watch it as anyone may
        stored = [e.data for e in store.get_events(table["match"])]
        hidden = set().union(*hidden_cards(stored, None).values())
        assert len(hidden) >= 26  # every seat's cards, the person's own too
        one = sorted(hidden)[0]
        assert set(TOKEN.findall(f"<td>{one}</td>")) & hidden == {one}  # the check sees a card
        shown = set(TOKEN.findall(page)) & hidden
        assert not shown, f"the page shows cards of the running match: {sorted(shown)}"
