"""The thirteen play page judges a foul exactly as the engine does, under
every ``wheel`` option, and is given the match's own rules: its foul check
runs in chromium over arrangements the engine judged, and a person's
table plays by the server's configured rules."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import aiohttp

from arena.games.thirteen.cards import CARD_STR, RANK_OF, SUIT_OF
from arena.games.thirteen.evaluator import hand_strength
from arena.games.thirteen.rules import ThirteenRules
from arena.games.thirteen.scoring import is_fouled
from arena.storage.sqlite import SqliteStore
from tests.browser import launch, needs_chromium, play_context
from tests.people.helpers import people_arena, register

WHEELS = ("lowest", "second_highest")
assert set(WHEELS) == {"lowest", "second_highest"}  # every option of the rules page


def _straight(rng: random.Random, high: int | None) -> list[int]:
    """Five cards of a straight topped by rank ``high`` (None: the wheel
    A-2-3-4-5), suits at random (now and then one suit: a straight flush)."""
    ranks = [12, 0, 1, 2, 3] if high is None else list(range(high - 4, high + 1))
    suit = rng.randrange(4) if rng.random() < 0.2 else None
    return [(suit if suit is not None else rng.randrange(4)) * 13 + r for r in ranks]


def arrangements(rng: random.Random, n: int) -> list[list[int]]:
    """13 distinct cards as front + middle + back: random splits, and splits
    whose middle and back are straights (the wheel against 5- to A-high)."""
    out: list[list[int]] = []
    while len(out) < n:
        if rng.random() < 0.5:
            out.append(rng.sample(range(52), 13))
            continue
        middle = _straight(rng, rng.choice([None, 5, 8, 11, 12]))
        back = _straight(rng, rng.choice([None, 5, 8, 11, 12]))
        if rng.random() < 0.5:
            middle, back = back, middle
        used = set(middle) | set(back)
        if len(used) < 10:
            continue
        front = rng.sample([c for c in range(52) if c not in used], 3)
        out.append(front + middle + back)
    return out


def engine_fouled(cards: list[int], wheel: str) -> bool:
    front, middle, back = cards[:3], cards[3:8], cards[8:]
    return is_fouled(hand_strength(front), hand_strength(middle, wheel),  # type: ignore[arg-type]
                     hand_strength(back, wheel))  # type: ignore[arg-type]


def test_the_generated_cases_hold_wheels_that_decide_a_foul() -> None:
    """The list below is worth running: the wheel option changes the verdict
    on some of its arrangements."""
    cases = arrangements(random.Random(1), 2000)
    assert all(len(set(c)) == 13 and all(0 <= x < 52 for x in c) for c in cases)
    differ = [c for c in cases if engine_fouled(c, "lowest") != engine_fouled(c, "second_highest")]
    assert len(differ) > 50
    assert RANK_OF[12] == 12 and SUIT_OF[13] == 1  # the card numbering the generator uses


@needs_chromium
async def test_the_pages_foul_check_is_the_engines_for_every_wheel(tmp_path: Path) -> None:
    from playwright.async_api import async_playwright

    cases = arrangements(random.Random(20261202), 3000)
    rows = [{"front": [CARD_STR[c] for c in a[:3]], "middle": [CARD_STR[c] for c in a[3:8]],
             "back": [CARD_STR[c] for c in a[8:]]} for a in cases]
    store = SqliteStore(tmp_path / "arena.db")
    try:
        async with people_arena(tmp_path, store) as (_, base), async_playwright() as p:
            browser = await launch(p)
            try:
                page = await (await play_context(browser)).new_page()
                await page.goto(f"{base}/play/thirteen")
                await page.wait_for_function("() => window.PlayThirteen !== undefined")
                for wheel in WHEELS:
                    rules = ThirteenRules(wheel=wheel).as_dict()  # type: ignore[arg-type]
                    verdicts: list[Any] = await page.evaluate(
                        "([rows, rules]) => rows.map((r) => window.PlayThirteen.foul(r, rules) !== null)",
                        [rows, rules])
                    expected = [engine_fouled(a, wheel) for a in cases]
                    wrong = [(rows[i], expected[i]) for i in range(len(cases))
                             if verdicts[i] != expected[i]]
                    assert not wrong, f"wheel={wheel}: {len(wrong)} verdicts differ, e.g. {wrong[:3]}"
            finally:
                await browser.close()
    finally:
        store.close()


async def test_a_persons_table_plays_by_the_servers_rules(tmp_path: Path) -> None:
    """The rules the page is given (match_start.rules) are the ones its
    engine plays by: the server's configured rules of its game."""
    store = SqliteStore(tmp_path / "arena.db")
    try:
        async with people_arena(tmp_path, store, game="thirteen",
                                rules={"wheel": "second_highest", "deals": 2}) as (_, base), \
                aiohttp.ClientSession() as http:
            token = await register(http, base, "nara")
            auth = {"Authorization": f"Bearer {token}"}
            async with http.post(f"{base}/api/play/thirteen", headers=auth) as r:
                assert r.status == 200, await r.text()
                table = await r.json()
            async with http.get(f"{base}/api/play/{table['match']}/messages",
                                params={"after": "-1"}, headers=auth) as r:
                start = (await r.json())["messages"][0]
            assert start["type"] == "match_start"
            assert start["rules"]["wheel"] == "second_highest" and start["rules"]["deals"] == 2
    finally:
        store.close()


@needs_chromium
async def test_the_page_judges_by_the_rules_its_match_start_gave(tmp_path: Path) -> None:
    from playwright.async_api import async_playwright

    store = SqliteStore(tmp_path / "arena.db")
    try:
        async with people_arena(tmp_path, store, game="thirteen",
                                rules={"wheel": "second_highest"}) as (arena, base), \
                async_playwright() as p:
            browser = await launch(p)
            try:
                page = await (await play_context(browser)).new_page()
                await page.goto(f"{base}/play/thirteen")
                await page.fill("#name", "enkh")
                await page.press("#name", "Enter")
                await page.click("#sit")
                await page.wait_for_selector("#hand button.pick")
                match = await page.evaluate("localStorage.getItem('arena-person-playing-thirteen')")
                engine_rules = arena.server.tables[match].engine.rules
                assert engine_rules["wheel"] == "second_highest"
                assert await page.evaluate("window.PlayThirteen.rules()") == dict(engine_rules)
            finally:
                await browser.close()
    finally:
        store.close()
