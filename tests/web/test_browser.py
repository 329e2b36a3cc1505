"""The pages in a real browser (Debian's chromium, headless, via playwright)."""

from __future__ import annotations

import hashlib
import time
from collections.abc import AsyncIterator

import pytest
from aiohttp.test_utils import TestServer

from arena.metrics import Metrics
from arena.storage.base import SeatFaults
from arena.storage.sqlite import SqliteStore
from arena.web.app import make_app
from arena.live import LiveHub

from tests.browser import WAIT_MS, launch, needs_chromium

from .helpers import finish_in_store, make_match, start_in_store

pytestmark = needs_chromium


@pytest.fixture
async def base_url(store: SqliteStore, hub: LiveHub) -> AsyncIterator[str]:
    server = TestServer(make_app(store, hub=hub, metrics=Metrics()), host="127.0.0.1")
    await server.start_server()
    try:
        yield str(server.make_url("/")).rstrip("/")
    finally:
        await server.close()


@pytest.fixture
async def page() -> AsyncIterator:
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await launch(p)
        try:
            context = await browser.new_context()
            tab = await context.new_page()
            errors: list[str] = []
            tab.on("pageerror", lambda e: errors.append(str(e)))
            tab.set_default_timeout(WAIT_MS)
            yield tab
            assert errors == [], errors
        finally:
            await browser.close()


async def cards_on_page(page) -> set[str]:
    return set(await page.eval_on_selector_all("[data-card]", "els => els.map(e => e.dataset.card)"))


async def test_standings_update_without_reload(page, base_url: str, store: SqliteStore,
                                               hub: LiveHub) -> None:
    await page.goto(base_url + "/")
    # The pages run under `script-src 'self'`: a wait given an expression
    # string is evaluated anew at each poll and refused by the policy, so
    # every wait passes a function.
    await page.wait_for_function("() => document.getElementById('live-status').textContent"
                                 ".includes('Live updates on')")
    assert await page.locator("table.standings").count() == 0
    await page.evaluate("window.notReloaded = true")

    finish_in_store(store, make_match("m1"))
    hub.standings_changed("ladder")
    await page.wait_for_selector('table.standings tr[data-bot="beta"]')
    assert await page.locator("table.standings tbody tr").count() == 5

    finish_in_store(store, make_match("m2", players=["beta", "zeta", "gamma", "delta", "eps"]))
    hub.standings_changed("ladder")
    await page.wait_for_selector('table.standings tr[data-bot="zeta"]')
    assert await page.evaluate("window.notReloaded") is True


async def test_replay_steps_through_a_trick(page, base_url: str, store: SqliteStore) -> None:
    m = make_match("done")
    finish_in_store(store, m)
    await page.goto(base_url + "/matches/done")
    await page.wait_for_selector("#replay[data-ready=true]")
    assert await page.locator("#replay").get_attribute("data-step") == "0"

    # The full deal is shown once the match is over.
    await page.select_option("#replay-jump", label="Round 1, hand 1")
    assert await cards_on_page(page) >= {c for hand in m.hands for c in hand}

    first_play = next(e for e in m.record_log if e["kind"] == "play")
    while "plays" not in await page.locator(".narration").text_content():
        await page.get_by_role("button", name="Next step").click()
    assert await page.locator("ol.trick li").count() == 1
    assert await page.locator(f"ol.trick [data-card='{first_play['card']}']").count() == 1
    for _ in range(4):
        await page.keyboard.press("ArrowRight")
    assert await page.locator("ol.trick li").count() == 5
    await page.keyboard.press("ArrowRight")
    narration = await page.locator(".narration").text_content()
    assert "wins the trick" in narration
    assert await page.locator("ol.trick li.winner").count() == 1
    await page.keyboard.press("ArrowLeft")
    assert "plays" in await page.locator(".narration").text_content()
    await page.get_by_role("button", name="Last step").click()
    assert "round 1" in (await page.locator(".narration").text_content()).lower()

    # Commitment checked in the browser, both with crypto.subtle and without.
    await page.wait_for_selector("#replay[data-verified='1/1']")
    assert await page.evaluate("Arena.sha256Fallback('a:b')") == \
        hashlib.sha256(b"a:b").hexdigest()


async def test_live_match_page_never_shows_a_hidden_card(page, base_url: str,
                                                         store: SqliteStore,
                                                         hub: LiveHub) -> None:
    m = make_match("run1")
    start_in_store(store, m)  # the stored log already holds every hand
    hub.match_started("run1", {"game": "muushig", "players": m.players,
                               "tournament_id": None, "started_at": time.time()})
    public = m.public_log
    half = next(i for i, e in enumerate(public) if e["kind"] == "trick") + 1
    for event in public[:half]:
        hub.match_events("run1", [(event, None)])

    await page.goto(base_url + "/matches/run1")
    await page.wait_for_selector("#replay[data-ready=true][data-live=true]")
    played: set[str] = {e["card"] for e in public[:half] if e["kind"] == "play"}
    assert await cards_on_page(page) <= played | {m.face_up}
    assert await page.locator(".card.back").count() == 20  # 4 cards left in 5 hands

    for event in public[half:-3]:  # more public events arrive while watching
        hub.match_events("run1", [(event, None)])
        if event["kind"] == "play":
            played.add(event["card"])
            await page.wait_for_selector(f"ol.trick [data-card='{event['card']}']")
        shown = await cards_on_page(page)
        assert shown <= played | {m.face_up}
    html = await page.content()
    assert not any(f'data-card="{c}"' in html for c in m.hidden_cards() - played)

    # At the end the full deal and its commitment check appear.
    store.finish_match("run1", result=m.result, reveal=m.reveal(),
                       faults=[SeatFaults()] * 5, latency_ms=[[]] * 5,
                       finished_at=time.time())
    for event in public[-3:]:
        hub.match_events("run1", [(event, None)])
    hub.match_ended("run1", {"result": m.result})
    await page.wait_for_selector("#replay[data-live=false][data-verified='1/1']")
    await page.select_option("#replay-jump", label="Round 1, hand 1")
    assert await cards_on_page(page) >= {c for hand in m.hands for c in hand}
    assert await page.locator("#match-status").text_content() == "finished"
