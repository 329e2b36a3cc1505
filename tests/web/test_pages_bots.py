"""Every name in a standings or match table has a page, in the ladder and per
tournament, whether or not the bots table knows it (tournament entrants,
house bots and open-mode bots are only named in their matches)."""

from __future__ import annotations

import re
import time

from aiohttp.test_utils import TestClient

from arena.storage.base import (
    MatchRecord,
    MatchStatus,
    SeatFaults,
    TournamentRecord,
    TournamentStatus,
)
from arena.storage.sqlite import SqliteStore

from .helpers import HandMadeMatch, make_match

DEMO = ["py-heuristic", "js-msgpack", "c-jsonl", "py-random", "house-heuristic-1"]
LOBBY = ["alpha", "house-heuristic-1", "house-heuristic-2", "house-random-3",
         "house-heuristic-4"]


def play_unregistered(store: SqliteStore, m: HandMadeMatch, *, tournament_id: str | None = None,
                      finished_at: float = 1000.0) -> None:
    """Store a finished match as the runner does: no row in the bots table."""
    store.create_match(MatchRecord(
        id=m.match_id, game="muushig", players=m.players, rules={}, limits={},
        status=MatchStatus.RUNNING, started_at=finished_at - 60, tournament_id=tournament_id))
    store.finish_match(m.match_id, result=m.result, reveal=m.reveal(),
                       faults=[SeatFaults(timeouts=s) for s in range(5)],
                       latency_ms=[[3.0 + s, 9.0 + s] for s in range(5)],
                       finished_at=finished_at)


def demo_tournament(store: SqliteStore, tid: str = "demo", matches: int = 3) -> None:
    config = {"entrants": [{"name": n, "command": ["x"]} for n in DEMO[:4]]}
    store.create_tournament(TournamentRecord(
        id=tid, name="Sample bots demo", game="muushig", config=config,
        status=TournamentStatus.FINISHED, created_at=900.0, finished_at=2000.0), [])
    for i in range(matches):
        players = DEMO[i:] + DEMO[:i]  # rotated seats, as duplicate mode does
        play_unregistered(store, make_match(f"{tid}-{i}", players=players, seed=i),
                          tournament_id=tid, finished_at=1000.0 + i)


async def html_of(client: TestClient, path: str, status: int = 200) -> str:
    response = await client.get(path)
    assert response.status == status, (path, response.status)
    return await response.text()


def bot_hrefs(html: str) -> set[str]:
    return set(re.findall(r'href="(/bots/[^"]+)"', html))


async def test_every_name_in_a_tournament_has_a_page(client: TestClient,
                                                     store: SqliteStore) -> None:
    demo_tournament(store)
    links = bot_hrefs(await html_of(client, "/tournaments/demo"))
    links |= bot_hrefs(await html_of(client, "/matches/demo-0"))
    links |= bot_hrefs(await html_of(client, "/matches?tournament=demo"))
    assert {link.split("?")[0] for link in links} >= {
        "/bots/py-heuristic", "/bots/js-msgpack", "/bots/c-jsonl", "/bots/py-random",
        "/bots/house-heuristic"}
    for link in links:
        html = await html_of(client, link.replace("&amp;", "&"))
        assert 'href="/matches/demo-0"' in html, link


async def test_an_entrant_page_shows_its_figures_in_the_tournament(
        client: TestClient, store: SqliteStore) -> None:
    demo_tournament(store)
    html = await html_of(client, "/bots/js-msgpack?scope=demo")
    assert "<h1>Bot js-msgpack</h1>" in html
    assert "local" in html  # started by the arena from the tournament file
    for i in range(3):
        assert f'href="/matches/demo-{i}"' in html
    assert "timeouts" in html and " ms" in html  # faults, latency with its unit
    assert "<svg" in html  # the rating chart
    assert 'href="/tournaments/demo"' in html


async def test_the_tournament_standings_link_to_the_tournament_scope(
        client: TestClient, store: SqliteStore) -> None:
    demo_tournament(store)
    html = await html_of(client, "/tournaments/demo")
    assert 'href="/bots/py-heuristic?scope=demo"' in html


async def test_api_bots_lists_every_player_seen_in_matches(client: TestClient,
                                                           store: SqliteStore) -> None:
    demo_tournament(store)
    body = await (await client.get("/api/bots")).json()
    kinds = {b["name"]: b["kind"] for b in body["bots"]}
    assert kinds == {"c-jsonl": "local", "house-heuristic": "house", "js-msgpack": "local",
                     "py-heuristic": "local", "py-random": "local"}
    assert body["total"] == 5
    stats = await client.get("/api/bots/py-heuristic?scope=demo")
    assert stats.status == 200
    assert (await stats.json())["matches"] == 3


async def test_an_open_mode_bot_has_a_page(client: TestClient, store: SqliteStore) -> None:
    play_unregistered(store, make_match("open1"))  # ladder, players never registered
    html = await html_of(client, "/bots/alpha")
    assert 'href="/matches/open1"' in html and "remote" in html
    await html_of(client, "/bots/nobody", 404)


async def test_house_seats_are_one_entrant_per_strategy(client: TestClient,
                                                        store: SqliteStore) -> None:
    play_unregistered(store, make_match("lobby1", players=LOBBY))
    ladder = (await (await client.get("/api/standings")).json())["standings"]
    assert sorted(r["bot"] for r in ladder) == ["alpha", "house-heuristic", "house-random"]
    html = await html_of(client, "/")
    assert "house-heuristic-2" not in re.sub(r"<table class=\"matches\".*?</table>", "",
                                             html, flags=re.S)
    # A match still names its seats; each links to its house entrant's page.
    match_html = await html_of(client, "/matches/lobby1")
    assert 'href="/bots/house-heuristic">house-heuristic-2</a>' in match_html
    page = await html_of(client, "/bots/house-heuristic")
    assert "house-heuristic-1" in page and "house-heuristic-4" in page  # says what it groups
    assert 'href="/matches/lobby1"' in page
    # A seat name typed into the address bar leads to its entrant.
    response = await client.get("/bots/house-heuristic-2", allow_redirects=False)
    assert response.status in (301, 302, 307, 308)
    assert response.headers["Location"] == "/bots/house-heuristic"


async def test_the_match_list_of_a_house_entrant(client: TestClient, store: SqliteStore) -> None:
    play_unregistered(store, make_match("lobby1", players=LOBBY), finished_at=time.time())
    html = await html_of(client, "/matches?bot=house-heuristic")
    assert 'href="/matches/lobby1"' in html and "(1 in all)" in html


async def test_each_match_of_a_bot_shows_its_faults_and_latency(client: TestClient,
                                                                store: SqliteStore) -> None:
    demo_tournament(store)
    html = await html_of(client, "/bots/js-msgpack?scope=demo")
    # demo-0 seats js-msgpack at seat 1: one timeout, latencies 4 and 10 ms.
    row = re.search(r'<tr><th scope="row"><a href="/matches/demo-0">.*?</tr>', html).group(0)
    assert "<td>1 timeout</td>" in row and '<td class="n">7.0</td>' in row
    assert ">Median latency (ms)<" in html
