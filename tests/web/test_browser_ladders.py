"""Both ladders on the home page in a real browser (Debian's chromium,
headless, via playwright), and a thirteen bot's page reached from its ladder."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from aiohttp.test_utils import TestServer

from arena.metrics import Metrics
from arena.storage.sqlite import SqliteStore
from arena.web.app import make_app
from arena.live import LiveHub

from tests.browser import needs_chromium

from .test_browser import page  # noqa: F401 (the browser tab fixture)
from .test_two_games import store_both_games

pytestmark = needs_chromium


@pytest.fixture
async def base_url(store: SqliteStore, hub: LiveHub) -> AsyncIterator[str]:
    store_both_games(store)
    server = TestServer(make_app(store, hub=hub, metrics=Metrics()), host="127.0.0.1")
    await server.start_server()
    try:
        yield str(server.make_url("/")).rstrip("/")
    finally:
        await server.close()


async def test_home_page_shows_both_ladders_and_links_to_a_thirteen_bot(
        base_url: str, page) -> None:  # noqa: F811
    await page.goto(base_url + "/")
    muushig = page.locator("#ladder-muushig table.standings")
    thirteen = page.locator("#ladder-thirteen table.standings")
    assert await muushig.is_visible() and await thirteen.is_visible()
    assert "★/match" in await muushig.locator("thead").inner_text()
    head = await thirteen.locator("thead").inner_text()
    assert "Points/match" in head and "★" not in head
    assert await muushig.locator('tr[data-bot="alpha"]').count() == 1
    assert await thirteen.locator('tr[data-bot="alpha"]').count() == 0
    await thirteen.locator('tr[data-bot="north"] a').click()
    await page.wait_for_url("**/bots/north*")
    assert (await page.locator("h1").inner_text()) == "Bot north"
    assert await page.get_by_text("Points per match", exact=True).count() >= 1
    chart = page.locator('svg[aria-labelledby="stars-title stars-desc"]')
    assert "north won" in await chart.locator("desc").text_content()


async def test_the_thirteen_ladder_updates_without_reload(base_url: str, page, store: SqliteStore,
                                                          hub: LiveHub) -> None:  # noqa: F811
    from .helpers_thirteen import finish_in_store, play_match

    await page.goto(base_url + "/")
    await page.wait_for_function("() => document.getElementById('live-status').textContent"
                                 ".includes('Live updates on')")
    assert await page.locator('#ladder-thirteen tr[data-bot="newcomer"]').count() == 0
    await page.evaluate("window.notReloaded = true")
    finish_in_store(store, play_match("th9", players=["newcomer", "north", "east", "south"],
                                      deals=1))
    # The standings cache serves the table of a moment ago while a fresh one
    # is due (arena.web.scopes): announce again until the page shows it.
    row = page.locator('#ladder-thirteen tr[data-bot="newcomer"]')
    for _ in range(40):
        hub.standings_changed("ladder")
        await asyncio.sleep(0.25)
        if await row.count():
            break
    assert await row.count() == 1
    assert await page.evaluate("window.notReloaded") is True
    assert await page.locator('#ladder-muushig tr[data-bot="newcomer"]').count() == 0
