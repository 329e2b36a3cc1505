"""The web pages and API while a real tournament runs on a real server."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import AsyncIterator

import aiohttp
import pytest

from arena.auth import hash_token
from arena.app import Arena, http_port_of
from arena.server.config import ServerConfig
from arena.server.server import ArenaServer
from arena.storage.base import MatchStatus, TournamentStatus
from arena.storage.sqlite import SqliteStore
from arena.tournament.config import load_config
from arena.tournament.runner import TournamentRunner, create_or_load
from tests.browser import launch, needs_chromium
from protocol.sdk.client import BotClient

ROOT = Path(__file__).resolve().parents[2]

# Slow enough for a page to watch a match live; slower still while the
# test's gate file exists, so a loaded machine's browser cannot miss every
# match (the test removes the gate once it has watched one).
SLOW_BOT = """
import os, time
from protocol.sdk import run_bot

GATE = {gate!r}

def play(phase, legal, state):
    time.sleep(0.1 if os.path.exists(GATE) else 0.01)
    return legal[-1] if phase == "decide" else legal[0]

run_bot(play)
"""


async def next_live_match(server: ArenaServer) -> str:
    async with asyncio.timeout(30):
        while True:
            live = server.hub.live_matches()
            if live:
                return live[-1]["id"]
            await asyncio.sleep(0.01)


@pytest.fixture
async def server(tmp_path) -> AsyncIterator[ArenaServer]:
    store = SqliteStore(tmp_path / "arena.db")
    arena = Arena(ServerConfig(port=0, http_port=0, db=str(tmp_path / "arena.db"),
                                   matchmaking=False, admin_token="admin-token",
                                   run_tournaments=True), store)
    await arena.start()
    try:
        yield arena.server
    finally:
        await arena.stop()
        store.close()


@needs_chromium
async def test_pages_follow_a_real_tournament(server: ArenaServer, tmp_path: Path) -> None:
    from playwright.async_api import TimeoutError as PlaywrightTimeoutError
    from playwright.async_api import async_playwright

    gate = tmp_path / "watching"
    gate.touch()
    bot = tmp_path / "slow_bot.py"
    bot.write_text(SLOW_BOT.format(gate=str(gate)))
    config_path = tmp_path / "t.toml"
    config_path.write_text(
        'name = "Browser cup"\nseed = 3\n[limits]\ndecision_ms = 2000\n'
        + "".join(f'[[entrant]]\nname = "{n}"\ncommand = ["python", "{bot}"]\n'
                  for n in ("north", "south")))
    config = load_config(config_path)
    record, _ = create_or_load(server.store, config)
    base = f"http://127.0.0.1:{http_port_of(server)}"
    async with async_playwright() as p:
        browser = await launch(p)
        try:
            page = await browser.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.set_default_timeout(30_000)
            await page.goto(f"{base}/tournaments/{record.id}")
            await page.wait_for_function("() => document.getElementById('live-status').textContent"
                                         ".includes('Live updates on')")
            await page.evaluate("window.notReloaded = true")
            assert await page.locator("table.standings").count() == 0

            run = asyncio.create_task(TournamentRunner(server, config, record).run())

            # A live match: its page shows only public cards.
            watched = False
            for _ in range(3):  # a match may end before its page has loaded or shown a card
                live_id = await next_live_match(server)
                watch = await browser.new_page()
                await watch.goto(f"{base}/matches/{live_id}")
                # Over before its page loaded: drawn as a replay, or held back
                # (embargoed) while its deck set's other rotations are unplayed.
                await watch.wait_for_selector("#replay[data-ready=true], "
                                              "#replay[data-embargoed=true]")
                if await watch.locator("#replay").get_attribute("data-live") != "true":
                    await watch.close()
                    continue
                try:
                    await watch.wait_for_selector("ol.trick [data-card]")
                except PlaywrightTimeoutError:
                    if any(m["id"] == live_id for m in server.hub.live_matches()):
                        raise  # still live and no card shown: the page does not follow it
                    await watch.close()  # it ended between its last card and the page
                    continue
                shown = set(await watch.eval_on_selector_all(
                    "[data-card]", "els => els.map(e => e.dataset.card)"))
                # The page is fed by the live hub, which the store lags (its
                # writer thread): compare with what the hub has published.
                log = [e["data"] for e in server.hub.public_log(live_id) or []]
                played = {e["card"] for e in log if e["kind"] == "play"}
                face_up = {e["face_up"] for e in log if e["kind"] == "hand_start"}
                assert shown <= played | face_up, shown - played - face_up
                watched = True
                break
            gate.unlink()  # the rest of the tournament plays at the usual pace
            assert watched, "no match stayed live long enough to watch"

            # The standings table appears and fills in without a reload.
            await page.wait_for_selector('table.standings tr[data-bot="north"]')
            # The charts fill in too (they were "No data yet." before the first match).
            await page.wait_for_selector('#charts svg.chart [data-series="north"]', state="attached")
            assert await run
            await page.wait_for_function(
                "() => document.querySelectorAll('#matches tbody tr').length >= 5")
            assert await page.evaluate("window.notReloaded") is True

            # A finished real match replays step by step, with its deal verified.
            finished = server.store.list_matches(tournament_id=record.id,
                                                 status=MatchStatus.FINISHED)
            replay = await browser.new_page()
            await replay.goto(f"{base}/matches/{finished[0].id}")
            await replay.wait_for_selector("#replay[data-ready=true]")
            while "plays" not in await replay.locator(".narration").text_content():
                await replay.get_by_role("button", name="Next step").click()
            assert await replay.locator("ol.trick li").count() == 1
            hands = len(server.store.get_match(finished[0].id).reveal)
            await replay.wait_for_selector(f"#replay[data-verified='{hands}/{hands}']")
            assert errors == [], errors
        finally:
            await browser.close()


async def test_a_tournament_created_over_http_is_played_by_the_server(server: ArenaServer) -> None:
    base = f"http://127.0.0.1:{http_port_of(server)}"
    tokens = {}
    async with aiohttp.ClientSession() as http:
        for name in ("east", "west"):
            async with http.post(f"{base}/api/bots", json={"name": name},
                                 headers={"Authorization": "Bearer admin-token"}) as resp:
                assert resp.status == 201
                tokens[name] = (await resp.json())["token"]
        assert server.store.get_bot("east").token_hash == hash_token(tokens["east"])
        doc = {"name": "Remote cup", "seed": 1, "limits": {"decision_ms": 2000},
               "entrant": [{"name": "east", "remote": True}, {"name": "west", "remote": True}]}
        async with http.post(f"{base}/api/tournaments?id=remote-cup", json=doc) as resp:
            assert resp.status == 401 or resp.status == 403
        async with http.post(f"{base}/api/tournaments?id=remote-cup", json=doc,
                             headers={"Authorization": "Bearer admin-token"}) as resp:
            assert resp.status == 201, await resp.text()

        clients = [BotClient("127.0.0.1", server.port, tokens[n], n,
                             lambda phase, legal, state: legal[0], threaded=False,
                             reconnect=False) for n in tokens]
        tasks = [asyncio.create_task(c.run()) for c in clients]
        try:
            async with asyncio.timeout(60):
                while server.store.get_tournament("remote-cup").status \
                        is not TournamentStatus.FINISHED:
                    await asyncio.sleep(0.05)
        finally:
            for c in clients:
                await c.stop()
            await asyncio.gather(*tasks, return_exceptions=True)
        schedule = server.store.get_schedule("remote-cup")
        assert len(schedule) == 5 and all(slot.match_id for slot in schedule)
        async with http.get(f"{base}/api/tournaments/remote-cup/standings") as resp:
            body = await resp.json()
        assert {row["bot"] for row in body["standings"]} >= {"east", "west"}
