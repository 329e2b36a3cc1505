"""The thirteen-card showdown view in a real browser: every seat's three
rows, fouls, the matrix between seats and the scores of a match the engine
played; stepping deal by deal; a live match that shows no hand before its
showdown; and the Muushig page still drawing the Muushig table."""

from __future__ import annotations

import time

import pytest

from arena.storage.base import SeatFaults
from arena.storage.sqlite import SqliteStore
from arena.live import LiveHub

from . import helpers
from .helpers_thirteen import ThirteenMatch, finish_in_store, play_match, start_in_store
from .browser_module import base_url, browser, page  # noqa: F401 (fixtures)
from tests.browser import needs_chromium

from .test_browser import cards_on_page

pytestmark = [
    needs_chromium,
    pytest.mark.asyncio(loop_scope="module"),
]

# One engine-played match for the module (arranging is most of its time).
MATCH = play_match("t13", deals=3, foul=(1, 2))


async def open_finished(page, base_url: str, store: SqliteStore) -> ThirteenMatch:
    finish_in_store(store, MATCH)
    await page.goto(base_url + "/matches/t13")
    await page.wait_for_selector("#replay[data-ready=true]")
    return MATCH


async def step(page) -> int:
    return int(await page.locator("#replay").get_attribute("data-step"))


async def row_cards(page, seat: int, row: str) -> set[str]:
    return set(await page.eval_on_selector_all(
        f".seat13[data-seat='{seat}'] dd[data-row={row}] [data-card]",
        "els => els.map(e => e.dataset.card)"))


async def matrix(page) -> list[list[str]]:
    return await page.eval_on_selector_all(
        "table.matrix tbody tr", "rows => rows.map(r => [...r.querySelectorAll('td')]"
        ".map(td => td.textContent))")


def signed(n: int) -> str:
    return f"+{n}" if n > 0 else str(n)


async def test_each_seat_shows_its_three_rows_of_the_showdown(page, base_url: str,
                                                              store: SqliteStore) -> None:
    m = await open_finished(page, base_url, store)
    assert await page.locator(".seat13").count() == 4
    showdown = m.showdowns[0]
    for seat, rows in enumerate(showdown["arrangements"]):
        for row in ("front", "middle", "back"):
            assert await row_cards(page, seat, row) == set(rows[row])
    assert await cards_on_page(page) == m.cards_of_deal(0)


async def test_the_matrix_and_the_deal_scores_are_the_showdowns(page, base_url: str,
                                                                store: SqliteStore) -> None:
    m = await open_finished(page, base_url, store)
    showdown = m.showdowns[0]
    expected = [["—" if i == j else signed(v) for j, v in enumerate(row)]
                + [signed(showdown["scores"][i])] for i, row in enumerate(showdown["pairs"])]
    assert await matrix(page) == expected
    for seat in range(4):
        text = await page.locator(f".seat13[data-seat='{seat}'] .figures").text_content()
        assert f"deal {signed(showdown['scores'][seat])}" in text
        assert f"total {showdown['totals'][seat]}" in text


async def test_a_fouled_seat_is_marked(page, base_url: str, store: SqliteStore) -> None:
    m = await open_finished(page, base_url, store)
    assert m.showdowns[1]["fouled"] == [False, False, True, False]
    assert await page.locator(".seat13.fouled").count() == 0
    await page.get_by_role("button", name="Next deal").click()
    fouled = page.locator(".seat13.fouled")
    assert await fouled.count() == 1
    assert await fouled.get_attribute("data-seat") == "2"
    assert await fouled.locator(".badge.foul").text_content() == "fouled"
    assert "Fouled: south (seat 2)" in await page.locator(".narration").text_content()


async def test_stepping_deal_by_deal_with_buttons_and_keys(page, base_url: str,
                                                           store: SqliteStore) -> None:
    m = await open_finished(page, base_url, store)
    assert await step(page) == 0
    assert await page.get_by_role("button", name="Previous deal").is_disabled()
    await page.keyboard.press("ArrowRight")
    assert await step(page) == 1
    assert await cards_on_page(page) == m.cards_of_deal(1)
    await page.keyboard.press("PageDown")
    assert await step(page) == 2
    assert await page.get_by_role("button", name="Next deal").is_disabled()
    await page.keyboard.press("Home")
    assert await step(page) == 0
    await page.keyboard.press("End")
    assert await step(page) == 2
    await page.keyboard.press("ArrowLeft")
    assert await step(page) == 1
    await page.get_by_role("button", name="First deal").click()
    assert await step(page) == 0
    await page.get_by_role("button", name="Last deal").click()
    assert "Deal 3 of 3" in await page.locator(".narration").text_content()
    await page.select_option("#replay-jump", label="Deal 2")
    assert await step(page) == 1


async def test_the_last_deal_shows_the_final_result(page, base_url: str,
                                                    store: SqliteStore) -> None:
    m = await open_finished(page, base_url, store)
    await page.get_by_role("button", name="Last deal").click()
    narration = await page.locator(".narration").text_content()
    winner = m.result["ranks"].index(1)
    assert f"Final result: 1. {m.players[winner]} (seat {winner}) {m.result['totals'][winner]}" \
        in narration
    cells = await page.eval_on_selector_all(
        "table.sheet tfoot tr", "rows => rows.map(r => [...r.querySelectorAll('td')]"
        ".map(td => Number(td.textContent)))")
    assert cells == [m.result["totals"], m.result["ranks"]]
    assert await page.locator("table.sheet tbody tr.current th").text_content() == "Deal 3"


async def test_the_decks_are_checked_against_their_commitments(page, base_url: str,
                                                               store: SqliteStore) -> None:
    await open_finished(page, base_url, store)
    await page.wait_for_selector("#replay[data-verified='3/3']")
    assert await page.locator(".verify summary").text_content() == \
        "3 of 3 deals verified in this browser"
    checks = await page.locator(".verify td.check").all_text_contents()
    assert checks == ["✓"] * 6


async def test_decks_named_by_round_and_hand_are_checked_too(page, base_url: str,
                                                             store: SqliteStore) -> None:
    finish_in_store(store, play_match("old13", deals=2, foul=None, label="round"))
    await page.goto(base_url + "/matches/old13")
    await page.wait_for_selector("#replay[data-verified='2/2']")
    assert await page.locator(".verify td.check").all_text_contents() == ["✓"] * 4


async def test_a_tampered_deck_fails_its_check(page, base_url: str, store: SqliteStore) -> None:
    m = play_match("bad13", deals=1, foul=None)
    deck = m.reveal[0]["deck"]
    deck[0], deck[1] = deck[1], deck[0]
    finish_in_store(store, m)
    await page.goto(base_url + "/matches/bad13")
    await page.wait_for_selector("#replay[data-verified='0/1']")
    assert "did not match its commitment" in await page.locator(".verify summary").text_content()


async def test_a_live_match_shows_no_hand_before_its_showdown(page, base_url: str,
                                                              store: SqliteStore,
                                                              hub: LiveHub) -> None:
    m = MATCH
    start_in_store(store, m)  # the stored log already holds every hand
    hub.match_started("t13", {"game": "thirteen", "players": m.players,
                              "tournament_id": None, "started_at": time.time()})
    public = m.public_log
    showdowns = [i for i, e in enumerate(public) if e["kind"] == "showdown"]
    # Deal 2 is under way: its commit, its start and two seats' answers are out.
    upto = showdowns[0] + 5
    assert [e["kind"] for e in public[showdowns[0] + 1:upto]] == \
        ["commit", "deal_start", "arranged", "arranged"]
    for event in public[:upto]:
        hub.match_events("t13", [(event, None)])

    await page.goto(base_url + "/matches/t13")
    await page.wait_for_selector("#replay[data-ready=true][data-live=true]")
    assert await step(page) == 1
    assert await cards_on_page(page) == set()
    assert await page.locator(".card.back").count() == 4 * 13
    assert await page.locator(".seat13 .badge", has_text="arranged").count() == 2
    assert "Deal 2 of 3: 2 of 4 seats have arranged" in \
        await page.locator(".narration").text_content()
    await page.keyboard.press("ArrowLeft")  # deal 1 is over: its showdown is public
    assert await cards_on_page(page) == m.cards_of_deal(0)
    await page.keyboard.press("ArrowRight")

    # Should an arranged event ever carry cards, the page still draws none.
    records = [e for e in m.record_log if e["kind"] == "arranged" and e["deal"] == 1]
    hub.match_events("t13", [(records[2], None)])
    await page.locator(".seat13 .badge", has_text="arranged").nth(2).wait_for()
    assert await cards_on_page(page) == set()
    html = await page.content()
    assert not any(f'data-card="{c}"' in html for c in m.cards_of_deal(1))

    for event in public[upto + 1:showdowns[1] + 1]:  # the last answer and the showdown
        hub.match_events("t13", [(event, None)])
    await page.wait_for_selector(".seat13 [data-card]")
    assert await cards_on_page(page) == m.cards_of_deal(1)

    store.finish_match("t13", result=m.result, reveal=m.reveal,
                       faults=[SeatFaults()] * 4, latency_ms=[[]] * 4, finished_at=time.time())
    for event in public[showdowns[1] + 1:]:
        hub.match_events("t13", [(event, None)])
    hub.match_ended("t13", {"result": m.result})
    await page.wait_for_selector("#replay[data-live=false][data-verified='3/3']")
    assert await page.locator("#match-status").text_content() == "finished"


async def test_a_muushig_match_page_still_draws_the_muushig_table(page, base_url: str,
                                                                  store: SqliteStore) -> None:
    m = helpers.make_match("mu1")
    helpers.finish_in_store(store, m)
    await page.goto(base_url + "/matches/mu1")
    await page.wait_for_selector("#replay[data-ready=true]")
    assert await page.locator(".table .seat").count() == 5
    assert await page.locator(".seat13").count() == 0
    await page.select_option("#replay-jump", label="Round 1, hand 1")
    assert await cards_on_page(page) >= {c for hand in m.hands for c in hand}
    await page.wait_for_selector("#replay[data-verified='1/1']")
