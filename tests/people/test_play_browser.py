"""A person plays a whole match in chromium by the keyboard alone, at
390 px wide, while a second browser watches it live; neither page ever
holds another seat's cards before the reveal."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from arena.storage.base import MatchStatus
from arena.storage.sqlite import SqliteStore
from tests.browser import PLAY_WAIT_MS, launch, needs_chromium, play_context
from tests.people.helpers import FAST, assert_no_hidden_cards, hidden_cards, people_arena

pytestmark = needs_chromium

# Everything a page is given, in order: JSON bodies of its requests and
# the live stream's messages (what the page could show, shown or not).
RECORD_HELD = """
window.__held = [];
const plainFetch = window.fetch;
window.fetch = async (...args) => {
  const response = await plainFetch(...args);
  if ((response.headers.get("content-type") || "").includes("json")) {
    window.__held.push(await response.clone().json());
  }
  return response;
};
const PlainSource = window.EventSource;
window.EventSource = function (url, options) {
  const source = new PlainSource(url, options);
  source.addEventListener("message", (e) => { window.__held.push(JSON.parse(e.data)); });
  return source;
};
"""

PHONE = {"width": 390, "height": 844}


async def play_by_keyboard(page: Any, deadline_s: float = 4 * PLAY_WAIT_MS / 1000) -> int:
    """Answer every request with the focused (first) action, by Enter only,
    until the page marks the match over; returns the answers given."""
    answers = 0
    until = time.monotonic() + deadline_s
    while time.monotonic() < until:
        handle = await page.wait_for_function(
            "() => document.querySelector('[data-match-over]') ? 'over' : "
            "(document.activeElement && document.activeElement.matches("
            "'#actions button[data-action]:not([disabled]), #hand button.pick') ? 'turn' : null)",
            timeout=PLAY_WAIT_MS)
        if await handle.json_value() == "over":
            return answers
        await page.keyboard.press("Enter")
        answers += 1
    raise AssertionError("the match did not end in time")


# A whole match played through a browser on a loaded machine: its waits
# are bounded by PLAY_WAIT_MS each, the test by the same scale.
@pytest.mark.timeout(int(5 * PLAY_WAIT_MS / 1000))
@pytest.mark.parametrize("game", ["muushig", "thirteen"])
async def test_a_person_plays_in_the_browser_while_another_watches(
        tmp_path: Path, game: str) -> None:
    from playwright.async_api import async_playwright

    store = SqliteStore(tmp_path / "arena.db")
    try:
        async with people_arena(tmp_path, store, FAST) as (arena, base), \
                async_playwright() as p:
            browser = await launch(p)
            try:
                person = await (await play_context(browser, viewport=PHONE)).new_page()
                await person.add_init_script(RECORD_HELD)
                errors: list[str] = []
                person.on("pageerror", lambda e: errors.append(str(e)))
                await person.goto(f"{base}/")
                await person.click(f"a[href='/play/{game}']")
                # Keyboard only: the name field has the focus.
                await person.wait_for_selector("#name:focus")
                await person.keyboard.type("zaya")
                await person.keyboard.press("Enter")
                await person.wait_for_selector("#sit:focus")
                await person.keyboard.press("Enter")
                await person.wait_for_selector("#actions button[data-action]")
                match = await person.evaluate(
                    f"localStorage.getItem('arena-person-playing-{game}')")
                assert match in arena.server.tables
                # Nothing is wider than the phone.
                assert await person.evaluate("document.documentElement.scrollWidth") <= 390

                watcher = await (await play_context(browser)).new_page()
                await watcher.add_init_script(RECORD_HELD)
                await watcher.goto(f"{base}/matches/{match}")
                await watcher.wait_for_selector("#replay[data-live=true]")

                answers = await play_by_keyboard(person)
                assert answers > 5
                await watcher.wait_for_function(
                    "() => document.getElementById('match-status') && "
                    "document.getElementById('match-status').textContent === 'finished'",
                    timeout=PLAY_WAIT_MS)
                held_person = await person.evaluate("window.__held")
                held_watcher = await watcher.evaluate("window.__held")
                assert errors == []
            finally:
                await browser.close()
        record = store.get_match(match)
        assert record.status is MatchStatus.FINISHED
        seat = record.players.index("zaya")
        stored = [e.data for e in store.get_events(match)]
        assert assert_no_hidden_cards(held_person, hidden_cards(stored, seat)) > 100
        assert assert_no_hidden_cards(held_watcher, hidden_cards(stored, None)) > 10
    finally:
        store.close()


async def test_the_thirteen_page_calls_fouls_as_the_rules_do(tmp_path: Path) -> None:
    """The foul shown before submitting is the engine's: 400 random
    arrangements (and each row from random hands) judged by both."""
    import random

    from playwright.async_api import async_playwright

    from arena.games.thirteen.arranger import Split
    from arena.games.thirteen.cards import CARD_INDEX, DECK, card_strs
    from arena.games.thirteen.wire import seat_hands

    rng = random.Random(13)
    cases = []
    for _ in range(400):
        cards = rng.sample(range(len(DECK)), 13)
        # Rows with pairs and more, not only high cards: sort some by rank.
        if rng.random() < 0.5:
            cards.sort(key=lambda c: card_strs((c,))[0][0])
        split = Split(tuple(cards[:3]), tuple(cards[3:8]), tuple(cards[8:]))
        rows = {"front": card_strs(split.front), "middle": card_strs(split.middle),
                "back": card_strs(split.back)}
        assert all(CARD_INDEX[c] is not None for c in rows["front"])
        cases.append((rows, seat_hands(split, "lowest").fouled))
    assert 40 < sum(f for _, f in cases) < 360  # both kinds, many of each
    store = SqliteStore(tmp_path / "arena.db")
    try:
        async with people_arena(tmp_path, store, FAST) as (arena, base), \
                async_playwright() as p:
            browser = await launch(p)
            try:
                page = await (await play_context(browser)).new_page()
                await page.goto(f"{base}/play/thirteen")
                page_says = await page.evaluate(
                    "(rows) => rows.map((r) => window.PlayThirteen.foul(r) !== null)",
                    [rows for rows, _ in cases])
            finally:
                await browser.close()
    finally:
        store.close()
    wrong = [rows for (rows, fouled), says in zip(cases, page_says) if fouled != says]
    assert wrong == []


@pytest.mark.timeout(int(5 * PLAY_WAIT_MS / 1000))
async def test_a_closed_tab_is_played_by_autopilot_and_a_reload_takes_the_seat_back(
        tmp_path: Path) -> None:
    import dataclasses

    from playwright.async_api import async_playwright

    store = SqliteStore(tmp_path / "arena.db")
    # House moves a little apart: the match outlasts the time a reload takes.
    paced = dataclasses.replace(FAST, house_pace_s=0.05)
    try:
        # Four hands a round at most: the rule under test is the seat's, not the
        # match's length (about 30 s of house moves still outlast a reload).
        async with people_arena(tmp_path, store, paced, rules={"max_hands": 4}) as (arena, base), \
                async_playwright() as p:
            browser = await launch(p)
            try:
                context = await play_context(browser, viewport=PHONE)
                page = await context.new_page()
                await page.goto(f"{base}/play/muushig")
                await page.fill("#name", "tuya")
                await page.press("#name", "Enter")
                await page.click("#sit")
                await page.wait_for_selector("#actions button[data-action]")
                match = await page.evaluate("localStorage.getItem('arena-person-playing-muushig')")
                table = arena.server.tables[match]
                seat = next(s for s in table.seats if s.name == "tuya")
                await page.close(run_before_unload=True)  # the tab closes: its goodbye
                async with asyncio.timeout(PLAY_WAIT_MS / 1000):
                    while seat.autopilot is None:
                        await asyncio.sleep(0.02)
                assert not table.session.over
                again = await context.new_page()  # the same browser: the token is kept
                await again.goto(f"{base}/play/muushig")
                await again.wait_for_selector("#actions button[data-action]")
                assert seat.autopilot is None and seat.conn is not None
                assert await again.evaluate(
                    "localStorage.getItem('arena-person-playing-muushig')") == match
                await play_by_keyboard(again)
            finally:
                await browser.close()
        record = store.get_match(match)
        assert record.status is MatchStatus.FINISHED
        assert record.faults is not None
        assert record.faults[record.players.index("tuya")].disconnects == 1
    finally:
        store.close()
