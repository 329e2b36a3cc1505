"""A gauntlet's section updates live in a real browser: a deck set played
and the hub's word, and the section says the new count without a reload."""

from __future__ import annotations

from playwright.async_api import expect

from arena.live import LiveHub
from arena.storage.sqlite import SqliteStore
from arena.tournament.growth import extend_if_due

from .test_browser import base_url, page, pytestmark  # noqa: F401 - fixtures, the skip
from .test_gauntlet_pages import gauntlet, play_open_slots


async def test_the_gauntlet_section_follows_the_deck_sets(page, base_url: str,  # noqa: F811
                                                          store: SqliteStore, hub: LiveHub,
                                                          tmp_path) -> None:
    config, tid = gauntlet(store, tmp_path)
    await page.goto(f"{base_url}/tournaments/{tid}")
    await page.wait_for_function("() => document.getElementById('live-status').textContent"
                                 ".includes('Live updates on')")
    assert "0 played" in await page.locator("#gauntlet").inner_text()
    await page.evaluate("window.notReloaded = true")

    play_open_slots(store, tid, challenger_stars=3)
    extend_if_due(store, config, tid)
    hub.standings_changed(tid)
    await expect(page.locator("#gauntlet")).to_contain_text("1 played (1 won")
    assert await page.evaluate("window.notReloaded") is True
