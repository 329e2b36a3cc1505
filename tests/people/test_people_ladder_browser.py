"""The people's ladder on the open home page shows a person's match once it
is stored, without a reload, like the bots' ladders (chromium, headless)."""

from __future__ import annotations

import random
from pathlib import Path

import aiohttp

from arena.storage.sqlite import SqliteStore
from tests.people.helpers import people_arena, play_as_person, random_legal, register
from tests.browser import needs_chromium
from tests.web.test_browser import page  # noqa: F401 (the browser tab fixture)

pytestmark = needs_chromium

# From the match stored to the row shown: a refetch or two, on a loaded machine.
SHOWN_WITHIN_MS = 30_000


async def test_the_people_ladder_updates_without_reload(tmp_path: Path,
                                                        page) -> None:  # noqa: F811
    store = SqliteStore(tmp_path / "arena.db")
    try:
        async with people_arena(tmp_path, store) as (arena, base), \
                aiohttp.ClientSession() as http:
            token = await register(http, base, "oyun")
            await page.goto(base + "/")
            await page.wait_for_function("() => document.getElementById('live-status').textContent"
                                         ".includes('Live updates on')")
            row = '#people-muushig tr[data-bot="oyun"]'
            assert await page.locator(row).count() == 0
            await page.evaluate("window.notReloaded = true")

            await play_as_person(http, base, token, "muushig", random_legal(random.Random(5)))
            await arena.server.writer.flush()  # the match is stored
            await page.wait_for_selector(row, timeout=SHOWN_WITHIN_MS)
            assert await page.evaluate("window.notReloaded") is True
            # A person's match is never on the bots' ladder.
            assert await page.locator('#standings-muushig tr[data-bot="oyun"]').count() == 0
    finally:
        store.close()
