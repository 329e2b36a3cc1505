"""Server-rendered pages: they exist, escape what they show and hide nothing
they should not show (the browser tests cover the scripts)."""

from __future__ import annotations

import time

from aiohttp.test_utils import TestClient

from arena.storage.base import TournamentRecord, TournamentStatus
from arena.storage.sqlite import SqliteStore
from arena.live import LiveHub
from arena.web.render import rating_chart

from .helpers import finish_in_store, make_match


async def page(client: TestClient, path: str, status: int = 200) -> str:
    response = await client.get(path)
    assert response.status == status, path
    assert response.content_type == "text/html"
    return await response.text()


async def test_standings_page_lists_the_ladder_and_live_matches(
        client: TestClient, store: SqliteStore, hub: LiveHub) -> None:
    finish_in_store(store, make_match("m1"))
    hub.match_started("now1", {"players": ["alpha", "beta"], "game": "muushig"})
    html = await page(client, "/")
    assert '<table class="standings">' in html
    for name in ("alpha", "beta", "gamma", "delta", "eps"):
        assert f'href="/bots/{name}"' in html
    assert 'href="/matches/now1"' in html
    assert 'data-live-channels="standings:ladder matches tournaments"' in html
    assert '<html lang="en">' in html


async def test_names_are_escaped(client: TestClient, store: SqliteStore) -> None:
    store.create_tournament(TournamentRecord(
        id="t1", name="<script>alert(1)</script>", game="muushig", config={},
        status=TournamentStatus.PENDING, created_at=time.time()), [])
    html = await page(client, "/")
    assert "<script>alert(1)" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    html = await page(client, "/tournaments/t1")
    assert "<script>alert(1)" not in html


async def test_tournament_page_shows_progress(client: TestClient, store: SqliteStore) -> None:
    store.create_tournament(TournamentRecord(
        id="cup", name="Cup", game="muushig", config={}, status=TournamentStatus.RUNNING,
        created_at=time.time()), [])
    html = await page(client, "/tournaments/cup")
    assert '<progress id="progress"' in html
    assert 'data-live-channels="tournament:cup"' in html
    await page(client, "/tournaments/none", 404)


async def test_a_duplicate_tournament_page_says_who_could_remember_earlier_rotations(
        client: TestClient, store: SqliteStore) -> None:
    config = {"duplicate": True, "entrants": [
        {"name": "near", "command": ["python", "/secret/path/bot.py"], "cwd": "/secret/path"},
        {"name": "far", "command": None, "remote": True},
        {"name": "mine.v2", "hosted": True, "bot": "mine", "version": 2}]}
    store.create_tournament(TournamentRecord(
        id="dup", name="Dup", game="muushig", config=config, status=TournamentStatus.RUNNING,
        created_at=time.time()), [])
    html = await page(client, "/tournaments/dup")
    assert '<li data-entrant="near" data-memory="yes">' in html and "(local)" in html
    assert '<li data-entrant="far" data-memory="yes">' in html and "(remote)" in html
    assert '<li data-entrant="mine.v2" data-memory="no">' in html and "(hosted)" in html
    assert "Hosted versions" in html and "/secret/path" not in html
    store.create_tournament(TournamentRecord(
        id="once", name="Once", game="muushig", config={**config, "duplicate": False},
        status=TournamentStatus.RUNNING, created_at=time.time()), [])
    assert "data-memory" not in await page(client, "/tournaments/once")


async def test_match_and_bot_pages(client: TestClient, store: SqliteStore) -> None:
    for i in range(2):
        finish_in_store(store, make_match(f"m{i}", seed=i), finished_at=100.0 + i)
    html = await page(client, "/matches/m1")
    assert 'id="replay"' in html and 'data-match="m1"' in html
    assert "delta" in html and "timeouts 1" in html
    html = await page(client, "/bots/beta")
    assert "<svg" in html and 'role="img"' in html
    assert 'href="/matches/m0"' in html
    await page(client, "/bots/nobody", 404)
    await page(client, "/matches/none", 404)
    html = await page(client, "/matches?bot=beta&limit=1")
    assert 'href="/matches/m1"' in html
    await page(client, "/matches?status=bogus", 400)


async def test_fragments_for_live_updates(client: TestClient, store: SqliteStore) -> None:
    assert "No finished matches" in await page(client, "/partials/standings?scope=ladder")
    finish_in_store(store, make_match("m1"))
    assert 'data-bot="beta"' in await page(client, "/partials/standings?scope=ladder")
    assert "No match is being played" in await page(client, "/partials/live")
    await page(client, "/partials/standings?scope=nope", 404)


async def test_static_files_and_security_headers(client: TestClient) -> None:
    for name in ("common.js", "live.js", "replay.js", "style.css"):
        response = await client.get(f"/static/{name}")
        assert response.status == 200, name
    response = await client.get("/")
    assert "script-src 'self'" in response.headers["Content-Security-Policy"]


def test_rating_chart_is_accessible_svg() -> None:
    svg = rating_chart([{"match": "a", "mu": 25.0, "sigma": 8.0},
                        {"match": "b", "mu": 27.5, "sigma": 6.0}], "bot<1>")
    assert svg.startswith("<svg") and 'role="img"' in svg
    assert "<title id=\"chart-title\">Rating history of bot&lt;1&gt;</title>" in svg
    assert svg.count("<circle") == 2
    assert "No rated matches" in rating_chart([], "x")
