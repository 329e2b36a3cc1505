"""The replay viewer's controls for a whole match, clicked in a real browser:
trick and hand steps with their keys, speeds by trick and by hand, the play
button after "Last", "Jump to hand" following the position, and the deal
check as one line that opens into its table."""

from __future__ import annotations

from typing import Any

import pytest

from arena.storage.sqlite import SqliteStore

from .helpers import HandMadeMatch, finish_in_store, make_match
from .browser_module import base_url, browser, page  # noqa: F401 (fixtures)
from tests.browser import needs_chromium

# One browser for the module (starting chromium is most of a test's time).
pytestmark = [
    needs_chromium,
    pytest.mark.asyncio(loop_scope="module"),
]


def two_hands(match_id: str) -> HandMadeMatch:
    """One round of two hands: the second hand is another seeded deal."""
    first, second = make_match(match_id, seed=1), make_match(match_id, seed=2)
    log: list[dict[str, Any]] = [e for e in first.record_log if e["kind"] != "round_end"]
    for event in second.record_log:
        if event["kind"] == "round_start":
            continue
        event = dict(event)
        if event["kind"] in ("deal", "commit", "hand_start"):
            event["hand"] = 1
        log.append(event)
    first.record_log = log
    reveal = first.reveal() + [{**second.reveal()[0], "hand": 1}]
    first.reveal = lambda: reveal  # type: ignore[method-assign]
    return first


async def step(page) -> int:
    return int(await page.locator("#replay").get_attribute("data-step"))


async def narration(page) -> str:
    return await page.locator(".narration").text_content()


async def open_replay(page, base_url: str, store: SqliteStore) -> None:
    finish_in_store(store, two_hands("two"))
    await page.goto(base_url + "/matches/two")
    await page.wait_for_selector("#replay[data-ready=true]")


async def test_next_and_previous_trick(page, base_url: str, store: SqliteStore) -> None:
    await open_replay(page, base_url, store)
    await page.get_by_role("button", name="Next trick").click()
    assert "wins the trick" in await narration(page)
    assert await page.locator("ol.trick li").count() == 5
    first_trick = await step(page)
    await page.keyboard.press("Shift+ArrowRight")
    assert "wins the trick" in await narration(page) and await step(page) > first_trick
    await page.keyboard.press("Shift+ArrowLeft")
    assert await step(page) == first_trick
    await page.get_by_role("button", name="Previous trick").click()
    assert await step(page) < first_trick


async def test_next_and_previous_hand_and_jump_follows(page, base_url: str,
                                                       store: SqliteStore) -> None:
    await open_replay(page, base_url, store)
    await page.get_by_role("button", name="Next hand").click()
    assert "hand 1" in await narration(page)
    assert await page.locator("#replay-jump option:checked").text_content() == \
        "Round 1, hand 1"
    await page.keyboard.press("PageDown")
    assert "hand 2" in await narration(page)
    assert await page.locator("#replay-jump option:checked").text_content() == \
        "Round 1, hand 2"
    await page.keyboard.press("ArrowRight")  # inside hand 2, the jump list stays on it
    assert await page.locator("#replay-jump option:checked").text_content() == \
        "Round 1, hand 2"
    await page.keyboard.press("PageUp")  # back to the start of this hand ...
    assert "hand 2" in await narration(page)
    await page.keyboard.press("PageUp")  # ... then to the hand before
    assert "hand 1" in await narration(page)
    await page.get_by_role("button", name="Previous hand").click()
    assert await step(page) == 0 or "hand 1" in await narration(page)


async def test_the_keys_are_shown_on_the_page(page, base_url: str, store: SqliteStore) -> None:
    await open_replay(page, base_url, store)
    keys = await page.locator("#replay .keys").text_content()
    for text in ("Shift", "PageUp", "PageDown", "Space", "Home", "End"):
        assert text in keys
    shortcut = await page.get_by_role("button", name="Next trick").get_attribute(
        "aria-keyshortcuts")
    assert shortcut == "Shift+ArrowRight"


async def test_playing_by_trick_moves_a_trick_per_tick(page, base_url: str,
                                                       store: SqliteStore) -> None:
    await open_replay(page, base_url, store)
    labels = await page.locator("#replay-speed option").all_text_contents()
    assert any("trick" in label for label in labels)
    assert any("hand" in label for label in labels)
    assert any("whole match" in label for label in labels)
    await page.select_option("#replay-speed", label=[x for x in labels if "trick" in x][-1])
    await page.get_by_role("button", name="Play or pause").click()
    await page.locator(".narration", has_text="wins the trick").wait_for()
    # The whole match's playing time at this speed is shown.
    assert "whole match" in await page.locator("#replay-duration").text_content()


async def test_after_last_the_button_offers_play(page, base_url: str,
                                                 store: SqliteStore) -> None:
    await open_replay(page, base_url, store)
    play = page.get_by_role("button", name="Play or pause")
    await play.click()
    assert await play.text_content() == "Pause"
    await page.get_by_role("button", name="Last step").click()
    assert await play.text_content() == "Play"
    assert await play.get_attribute("aria-pressed") == "false"
    await page.wait_for_timeout(600)  # and it stays so
    assert await play.text_content() == "Play"


async def test_the_deal_check_is_one_line_that_opens(page, base_url: str,
                                                     store: SqliteStore) -> None:
    await open_replay(page, base_url, store)
    await page.wait_for_selector("#replay[data-verified='2/2']")
    summary = page.locator(".verify summary")
    assert await summary.text_content() == "2 of 2 deals verified in this browser"
    table = page.locator(".verify table")
    assert not await table.is_visible()
    await summary.click()
    assert await table.is_visible()
    assert await page.locator(".verify tbody tr").count() == 2
