"""The web over a store holding finished matches of both games: a ladder
per game, the game as a filter, and no page or route that breaks."""

from __future__ import annotations

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
from tests.web import helpers, helpers_thirteen

MUUSHIG_PLAYERS = ["both", "alpha", "beta", "gamma", "delta"]
THIRTEEN_PLAYERS = ["both", "north", "east", "south"]


def store_both_games(store: SqliteStore) -> None:
    """One finished ladder match of each game, with one bot that played both,
    and a thirteen tournament with one finished match."""
    helpers.finish_in_store(store, helpers.make_match("mu1", players=MUUSHIG_PLAYERS),
                            finished_at=time.time() - 10)
    helpers_thirteen.finish_in_store(
        store, helpers_thirteen.play_match("th1", players=THIRTEEN_PLAYERS, deals=2))
    store.create_tournament(TournamentRecord(
        id="poker", name="Poker cup", game="thirteen", config={"game": "thirteen"},
        status=TournamentStatus.FINISHED, created_at=time.time()), [])
    m = helpers_thirteen.play_match("th2", players=["north", "east", "south", "west"],
                                    deals=2, seed=9)
    for name in m.players:
        store.ensure_bot(name)
    store.create_match(MatchRecord(
        id=m.match_id, game="thirteen", players=m.players, rules=m.rules,
        limits={"decision_ms": 1000, "bank_ms": 0}, status=MatchStatus.RUNNING,
        started_at=time.time() - 5, tournament_id="poker"))
    store.finish_match(m.match_id, result=m.result, reveal=m.reveal,
                       faults=[SeatFaults() for _ in m.players],
                       latency_ms=[[4.0]] * 4, finished_at=time.time())


PAGES = ["/", "/matches", "/matches?game=thirteen", "/matches?game=muushig",
         "/matches/mu1", "/matches/th1", "/bots/both", "/bots/both?scope=ladder",
         "/bots/north", "/bots/alpha", "/partials/standings",
         "/partials/standings?scope=ladder&game=thirteen", "/partials/standings?scope=all",
         "/partials/matches", "/partials/live", "/partials/tournaments",
         "/tournaments/poker"]
API = ["/api/standings", "/api/standings?scope=all", "/api/standings?scope=ladder&game=thirteen",
       "/api/standings?scope=all&game=muushig", "/api/matches", "/api/matches?game=thirteen",
       "/api/bots", "/api/bots?game=thirteen", "/api/bots/both", "/api/bots/both?game=thirteen",
       "/api/bots/north?scope=all", "/api/tournaments", "/api/tournaments?game=thirteen",
       "/api/tournaments/poker", "/api/tournaments/poker/standings", "/api/health"]


async def test_every_page_answers_with_both_games_finished(client: TestClient,
                                                           store: SqliteStore) -> None:
    store_both_games(store)
    for path in PAGES + API:
        resp = await client.get(path)
        assert resp.status == 200, (path, resp.status, (await resp.text())[:300])


async def body(client: TestClient, path: str, status: int = 200) -> dict:
    resp = await client.get(path)
    assert resp.status == status, (path, await resp.text())
    return await resp.json()


async def text(client: TestClient, path: str) -> str:
    resp = await client.get(path)
    assert resp.status == 200, (path, resp.status)
    return await resp.text()


async def test_the_ladder_api_ranks_one_game_named_by_the_game_parameter(
        client: TestClient, store: SqliteStore) -> None:
    store_both_games(store)
    thirteen = await body(client, "/api/standings?scope=ladder&game=thirteen")
    assert thirteen["game"] == "thirteen"
    assert {r["bot"] for r in thirteen["standings"]} == set(THIRTEEN_PLAYERS)
    assert {r["game"] for r in thirteen["standings"]} == {"thirteen"}
    muushig = await body(client, "/api/standings?scope=ladder")
    assert muushig["game"] == "muushig"  # the default game
    assert {r["bot"] for r in muushig["standings"]} == set(MUUSHIG_PLAYERS)
    every = await body(client, "/api/standings?scope=all&game=thirteen")
    assert {r["bot"] for r in every["standings"]} == set(THIRTEEN_PLAYERS) | {"west"}


async def test_a_tournament_standings_are_of_its_own_game(client: TestClient,
                                                         store: SqliteStore) -> None:
    store_both_games(store)
    rows = (await body(client, "/api/tournaments/poker/standings"))["standings"]
    assert {r["game"] for r in rows} == {"thirteen"} and len(rows) == 4


async def test_an_unknown_game_is_a_bad_request(client: TestClient, store: SqliteStore) -> None:
    store_both_games(store)
    for path in ("/api/standings?game=chess", "/api/matches?game=chess", "/api/bots?game=chess"):
        message = (await body(client, path, 400))["error"]["message"]
        assert "muushig" in message and "thirteen" in message


async def test_thirteen_intervals_are_on_points_per_match(client: TestClient,
                                                         store: SqliteStore) -> None:
    store_both_games(store)
    for m in range(3, 6):
        helpers_thirteen.finish_in_store(store, helpers_thirteen.play_match(
            f"th{m}", players=THIRTEEN_PLAYERS, deals=2, seed=m))
    rows = (await body(client, "/api/standings?game=thirteen"))["standings"]
    assert any(r["points_ci_low"] < r["points_per_match"] < r["points_ci_high"] for r in rows)
    for r in rows:
        assert r["points_ci_low"] <= r["points_per_match"] <= r["points_ci_high"]
        assert r["stars"] is None and r["stars_ci_low"] is None


async def test_lists_filter_by_game(client: TestClient, store: SqliteStore) -> None:
    store_both_games(store)
    matches = (await body(client, "/api/matches?game=thirteen"))
    assert {m["id"] for m in matches["matches"]} == {"th1", "th2"} and matches["total"] == 2
    assert [m["id"] for m in (await body(client, "/api/matches?game=muushig"))["matches"]] \
        == ["mu1"]
    bots = {b["name"] for b in (await body(client, "/api/bots?game=muushig"))["bots"]}
    assert bots == set(MUUSHIG_PLAYERS)
    bots = {b["name"] for b in (await body(client, "/api/bots?game=thirteen"))["bots"]}
    assert bots == set(THIRTEEN_PLAYERS) | {"west"}
    assert [t["id"] for t in (await body(client, "/api/tournaments?game=thirteen"))
            ["tournaments"]] == ["poker"]
    assert (await body(client, "/api/tournaments?game=muushig"))["tournaments"] == []


async def test_a_bot_of_both_games_has_figures_in_each(client: TestClient,
                                                      store: SqliteStore) -> None:
    store_both_games(store)
    both = await body(client, "/api/bots/both")
    assert both["games"] == ["muushig", "thirteen"]
    assert both["game"] == "muushig" and both["stars_per_match"] is not None
    poker = await body(client, "/api/bots/both?game=thirteen")
    assert poker["game"] == "thirteen" and poker["matches"] == 1
    assert poker["standing"]["game"] == "thirteen" and poker["stars_per_match"] is None
    assert poker["points_per_match"] == poker["standing"]["points_per_match"]
    # A bot of thirteen only: its figures default to the game it played.
    assert (await body(client, "/api/bots/north"))["game"] == "thirteen"


async def test_the_home_page_shows_a_ladder_per_game_with_its_columns(
        client: TestClient, store: SqliteStore) -> None:
    store_both_games(store)
    html = await text(client, "/")
    muushig = html[html.index('id="ladder-muushig"'):html.index('id="ladder-thirteen"')]
    thirteen = html[html.index('id="ladder-thirteen"'):]
    assert "★/match" in muushig and "Score sum" in muushig and 'data-bot="alpha"' in muushig
    assert "Points/match" in thirteen and "★" not in thirteen.split("</table>")[0]
    assert 'data-bot="north"' in thirteen and 'data-bot="alpha"' not in thirteen
    assert "Ranked by total points" in thirteen


async def test_the_tournament_page_shows_its_games_columns(client: TestClient,
                                                          store: SqliteStore) -> None:
    store_both_games(store)
    html = await text(client, "/tournaments/poker")
    assert "Points/match" in html and "★/match" not in html
    assert "Points per match over the tournament" in html


async def test_the_bot_page_shows_each_game_it_played(client: TestClient,
                                                      store: SqliteStore) -> None:
    store_both_games(store)
    html = await text(client, "/bots/both")
    assert 'id="game-muushig"' in html and 'id="game-thirteen"' in html
    poker = html[html.index('id="game-thirteen"'):]
    assert "Points per match" in poker and 'href="/matches/th1"' in poker
    assert 'href="/matches/mu1"' not in poker
    single = await text(client, "/bots/north")
    assert 'id="game-' not in single and "Points per match of north" in single


async def test_the_matches_page_filters_by_game(client: TestClient, store: SqliteStore) -> None:
    store_both_games(store)
    html = await text(client, "/matches?game=thirteen")
    assert 'href="/matches/th1"' in html and 'href="/matches/mu1"' not in html
    assert "points)" in html  # each seat's points, not stars
    assert 'href="/matches?game=muushig"' in html


async def test_the_game_filter_keeps_running_and_aborted_matches_of_that_game(
        client: TestClient, store: SqliteStore) -> None:
    store_both_games(store)
    helpers_thirteen.start_in_store(store, helpers_thirteen.play_match("th-live", deals=1),
                                    started_at=time.time() + 5)
    helpers.start_in_store(store, helpers.make_match("mu-live"), started_at=time.time() + 6)
    store.abort_match("mu-live", "a bot left")
    listed = await body(client, "/api/matches?game=thirteen")
    assert [m["id"] for m in listed["matches"]] == ["th-live", "th2", "th1"]
    assert [m["id"] for m in (await body(client, "/api/matches?game=thirteen&limit=1&offset=1"))
            ["matches"]] == ["th2"]
    aborted = await body(client, "/api/matches?game=muushig&status=aborted")
    assert [m["id"] for m in aborted["matches"]] == ["mu-live"]
    mine = await body(client, "/api/matches?game=thirteen&bot=west&tournament=poker")
    assert [m["id"] for m in mine["matches"]] == ["th2"]
