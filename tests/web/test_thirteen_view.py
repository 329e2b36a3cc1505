"""The match page draws each game as the game describes itself: its replay
script and its result columns come from the game's spec (``extra["web"]``),
never from a test of the game's name in the web code."""

from __future__ import annotations

import pytest

import ast
from importlib import resources
from pathlib import Path

from aiohttp.test_utils import TestClient

import arena.web.pages
from arena.games import game_names, get_game
from arena.storage.base import MatchRecord, MatchStatus, SeatFaults
from arena.storage.sqlite import SqliteStore

from . import helpers, helpers_thirteen
from .test_pages import page

STATIC = Path(str(resources.files("arena.web").joinpath("static")))


def test_every_game_names_a_replay_script_that_exists() -> None:
    for name in game_names():
        web = get_game(name).extra["web"]
        assert (STATIC / web["replay_script"]).is_file(), name
        assert web["result_columns"][0] == ["ranks", "Place"], name


WEB_MODULES = ("pages.py", "bot_page.py", "bot_figures.py", "ladders.py", "render.py",
               "plots.py", "series.py", "scopes.py", "queries.py", "api.py")


@pytest.mark.parametrize("module", WEB_MODULES)
def test_the_web_code_names_no_game(module: str) -> None:
    source = (Path(arena.web.pages.__file__).parent / module).read_text(encoding="utf-8")
    literals = {node.value for node in ast.walk(ast.parse(source))
                if isinstance(node, ast.Constant) and isinstance(node.value, str)}
    for name in game_names():
        assert not any(name in text.lower() for text in literals), name


async def test_a_thirteen_match_page_loads_the_showdown_viewer(client: TestClient,
                                                               store: SqliteStore) -> None:
    helpers_thirteen.finish_in_store(store, helpers_thirteen.play_match("t1"))
    html = await page(client, "/matches/t1")
    assert '<script src="/static/replay_thirteen.js" defer></script>' in html
    assert "/static/replay.js" not in html
    assert 'data-game="thirteen"' in html


async def test_a_muushig_match_page_keeps_its_replay_viewer(client: TestClient,
                                                            store: SqliteStore) -> None:
    helpers.finish_in_store(store, helpers.make_match("m1"))
    html = await page(client, "/matches/m1")
    assert '<script src="/static/replay.js" defer></script>' in html
    assert "replay_thirteen.js" not in html
    assert '<th scope="col">★</th><th scope="col">Score sum</th>' in html


async def test_the_seats_table_has_the_games_result_columns(client: TestClient,
                                                            store: SqliteStore) -> None:
    m = helpers_thirteen.play_match("t2")
    helpers_thirteen.finish_in_store(store, m)
    html = await page(client, "/matches/t2")
    assert '<th scope="col">Place</th><th scope="col">Points</th>' in html
    assert "★" not in html and "Score sum" not in html
    for seat, total in enumerate(m.result["totals"]):
        assert (f'<td class="n">{m.result["ranks"][seat]}</td>'
                f'<td class="n">{total}</td>') in html


async def test_a_game_that_describes_no_viewer_gets_the_log_link(client: TestClient,
                                                                 store: SqliteStore) -> None:
    store.ensure_bot("a")
    store.create_match(MatchRecord(
        id="x1", game="nosuchgame", players=["a", "a"], rules={}, limits={},
        status=MatchStatus.RUNNING, started_at=1.0))
    store.finish_match("x1", result={"ranks": [1, 2]}, reveal=[], faults=[SeatFaults()] * 2,
                       latency_ms=[[], []], finished_at=2.0)
    html = await page(client, "/matches/x1")
    assert "replay.js" not in html and "replay_thirteen.js" not in html
    assert 'This game has no replay viewer; the full log is at <a href="/api/matches/x1">' in html
    assert arena.web.pages.match_view("nosuchgame").result_columns == (("ranks", "Place"),)


async def test_the_stored_log_is_the_engine_record_with_a_commit_per_deal(
        client: TestClient, store: SqliteStore) -> None:
    m = helpers_thirteen.play_match("t3", deals=2)
    helpers_thirteen.finish_in_store(store, m)
    body = await (await client.get("/api/matches/t3")).json()
    kinds = [e["data"]["kind"] for e in body["events"]]
    assert kinds.count("commit") == 2 and kinds.count("showdown") == 2
    assert [e["seq"] for e in body["events"]] == list(range(len(kinds)))
    assert [r["deal"] for r in body["match"]["reveal"]] == [0, 1]
    assert body["match"]["result"]["totals"] == body["events"][-1]["data"]["totals"]
