"""The play page offers the table's choice: house bots of each strength and
the opted-in bots waiting in the lobby; the person's pick is who sits. The
page links the person's own page."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any


from arena.storage.sqlite import SqliteStore
from tests.people.helpers import people_arena
from tests.browser import PLAY_WAIT_MS, launch, needs_chromium, play_context
from tests.people.test_play_browser import PHONE
from tests.server.rawbot import RawBot

pytestmark = needs_chromium


async def test_the_person_picks_the_table_on_the_play_page(tmp_path: Path) -> None:
    from playwright.async_api import async_playwright

    store = SqliteStore(tmp_path / "arena.db")
    try:
        async with people_arena(tmp_path, store, house_wait_s=600.0, open=True) as (arena, base), \
                async_playwright() as p:
            willing = await RawBot().connect(arena.port)
            await willing.send({"type": "hello", "protocol": 1, "token": "t-w", "name": "willing",
                                "game": "muushig", "people": True})
            assert (await willing.recv() or {}).get("type") == "welcome"
            shy = await RawBot().connect(arena.port)
            await shy.send({"type": "hello", "protocol": 1, "token": "t-s", "name": "shy",
                            "game": "muushig"})
            assert (await shy.recv() or {}).get("type") == "welcome"
            async with asyncio.timeout(PLAY_WAIT_MS / 1000):
                while not {"willing", "shy"} <= set(arena.server.lobby.idle_bots()):
                    await asyncio.sleep(0.02)
            browser = await launch(p)
            try:
                page = await (await play_context(browser, viewport=PHONE)).new_page()
                errors: list[str] = []
                page.on("pageerror", lambda e: errors.append(str(e)))
                await page.goto(f"{base}/play/muushig")
                await page.fill("#name", "khulan")
                await page.press("#name", "Enter")
                await page.wait_for_selector("#me a[href='/people/khulan']")
                await page.wait_for_selector("#choice:not([hidden]) input[value='lobby:willing']")
                values: list[Any] = await page.eval_on_selector_all(
                    "input[name=opponents]", "(xs) => xs.map((x) => x.value)")
                assert values == ["any", "house:random", "house:heuristic", "lobby:willing"]
                labels = await page.inner_text("#choice")
                assert "strength 1 of 2" in labels and "strength 2 of 2" in labels
                assert await page.evaluate("document.documentElement.scrollWidth") <= 390
                await page.check("input[value='house:random']")
                await page.click("#sit")
                await page.wait_for_selector("#actions button[data-action]")
                match = await page.evaluate("localStorage.getItem('arena-person-playing-muushig')")
                players = arena.server.tables[match].players
                assert sorted(p for p in players if p != "khulan") == [
                    f"house-random-{i}" for i in range(1, 5)]
                assert {"willing", "shy"} <= set(arena.server.lobby.idle_bots())
                assert errors == []
            finally:
                await browser.close()
    finally:
        store.close()
