"""The pages at a phone's width (390 px, in chromium): nothing is cut off
(the page never scrolls sideways; a wide table scrolls inside its own box)
and the header's links are all on screen. The standings' "vs next" verdict
is one short line, its detail on hover (and in the API)."""

from __future__ import annotations

import pytest

from arena.live import LiveHub
from arena.storage.sqlite import SqliteStore

from .browser_module import base_url, browser, page  # noqa: F401 - fixtures
from .helpers import finish_in_store, make_match
from tests.browser import needs_chromium

pytestmark = [
    needs_chromium,
    pytest.mark.asyncio(loop_scope="module"),
]

PHONE = {"width": 390, "height": 844}
# Names as long as the name rule allows: the widest a row gets.
LONG = ["a-bot-with-a-name-of-32-chars-xx", "beta", "gamma-the-second-longest-name-ok",
        "delta", "eps"]
PAGES = ["/", "/matches", "/matches/m0", f"/bots/{LONG[0]}", "/rules", "/protocol",
         "/docs/api"]


@pytest.fixture
def played(store: SqliteStore, hub: LiveHub) -> None:
    for i in range(8):
        players = LONG[i % 5:] + LONG[:i % 5]
        finish_in_store(store, make_match(f"m{i}", players=players, seed=i))


@pytest.mark.parametrize("path", PAGES)
async def test_a_page_fits_a_phone(page, base_url: str, played, path: str) -> None:  # noqa: F811
    await page.set_viewport_size(PHONE)
    await page.goto(base_url + path)
    overflow = await page.evaluate("document.documentElement.scrollWidth")
    assert overflow <= PHONE["width"], f"{path} scrolls sideways: {overflow} px wide"
    boxes = await page.eval_on_selector_all(
        "header.site a, header.site nav a",
        "els => els.map(e => { const r = e.getBoundingClientRect();"
        " return [e.textContent, r.left, r.right, r.width]; })")
    assert boxes
    for text, left, right, width in boxes:
        assert width > 0 and left >= 0 and right <= PHONE["width"], (path, text, left, right)
    tables = await page.eval_on_selector_all(
        "main table", "els => els.map(e => e.getBoundingClientRect().right)")
    assert all(right <= PHONE["width"] for right in tables), (path, tables)


async def test_the_vs_next_verdict_is_one_short_line(page, base_url: str, played) -> None:  # noqa: F811
    await page.set_viewport_size({"width": 1280, "height": 900})
    await page.goto(base_url + "/")
    cells = page.locator("table.standings td.sep")
    assert await cells.count() >= 1
    line = await page.evaluate("parseFloat(getComputedStyle(document.body).lineHeight)")
    for i in range(await cells.count()):
        cell = cells.nth(i)
        text = (await cell.inner_text()).strip()
        if not text:
            continue  # the last row has no neighbour below
        assert text in ("separated", "not yet"), text
        verdict = cell.locator(".sig")
        assert "p =" in (await verdict.get_attribute("title") or "")  # the detail, on hover
        box = await cell.bounding_box()
        assert box is not None and box["height"] < 2 * line + 12, (text, box)
    rows = await page.eval_on_selector_all(
        "table.standings tbody tr", "els => els.map(e => e.getBoundingClientRect().height)")
    assert max(rows) < 2 * line + 12, rows
