"""After a small real tournament, every link on every page of the site leads
somewhere: no 404 (nor any other error), including the links the scripts add
(the replay's seat names)."""

from __future__ import annotations

from pathlib import Path
from typing import AsyncIterator
from urllib.parse import urldefrag, urlsplit

import pytest

from arena.app import Arena, http_port_of
from arena.server.config import ServerConfig
from arena.server.server import ArenaServer
from arena.storage.base import TournamentStatus
from arena.storage.sqlite import SqliteStore
from arena.tournament.config import load_config
from arena.tournament.runner import TournamentRunner, create_or_load
from tests.browser import launch, needs_chromium

MAX_PAGES = 120  # a bound, not a target: the site of this tournament has fewer

FAST_BOT = """
from protocol.sdk import run_bot

def play(phase, legal, state):
    return legal[-1] if phase == "decide" else legal[0]

run_bot(play)
"""


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[ArenaServer]:
    store = SqliteStore(tmp_path / "arena.db")
    arena = Arena(ServerConfig(port=0, http_port=0, db=str(tmp_path / "arena.db"),
                                   matchmaking=False, admin_token="admin-token"), store)
    await arena.start()
    try:
        yield arena.server
    finally:
        await arena.stop()
        store.close()


def crawlable(path: str) -> bool:
    # Static files and JSON are checked for their status, not opened as pages.
    return not (path.startswith("/static/") or path.startswith("/api") or path == "/metrics")


@needs_chromium
async def test_every_link_after_a_real_tournament_works(server: ArenaServer,
                                                        tmp_path: Path) -> None:
    from playwright.async_api import async_playwright

    bot = tmp_path / "bot.py"
    bot.write_text(FAST_BOT)
    config_path = tmp_path / "t.toml"
    config_path.write_text(
        'name = "Link cup"\nseed = 5\n[limits]\ndecision_ms = 2000\n'
        + "".join(f'[[entrant]]\nname = "{n}"\ncommand = ["python", "{bot}"]\n'
                  for n in ("north", "south")))
    config = load_config(config_path)
    record, _ = create_or_load(server.store, config)
    assert await TournamentRunner(server, config, record).run()
    assert server.store.get_tournament(record.id).status is TournamentStatus.FINISHED

    base = f"http://127.0.0.1:{http_port_of(server)}"
    broken: list[str] = []
    seen: set[str] = set()
    queue = ["/", f"/tournaments/{record.id}"]
    async with async_playwright() as p:
        browser = await launch(p)
        try:
            tab = await browser.new_page()
            errors: list[str] = []
            tab.on("pageerror", lambda e: errors.append(str(e)))
            tab.set_default_timeout(20_000)
            while queue and len(seen) < MAX_PAGES:
                path = queue.pop(0)
                if path in seen:
                    continue
                seen.add(path)
                if not crawlable(path):
                    response = await tab.request.get(base + path)
                    if response.status >= 400:
                        broken.append(f"{path}: {response.status}")
                    continue
                response = await tab.goto(base + path)
                if response is None or response.status >= 400:
                    broken.append(f"{path}: {response.status if response else 'no answer'}")
                    continue
                if path.startswith("/matches/"):  # the replay adds links of its own
                    await tab.wait_for_selector("#replay[data-ready=true]")
                hrefs = await tab.eval_on_selector_all("a[href]", "as => as.map(a => a.href)")
                for href in hrefs:
                    url, _ = urldefrag(href)
                    parts = urlsplit(url)
                    if parts.netloc != urlsplit(base).netloc or parts.path == "/api/live":
                        continue
                    link = parts.path + (f"?{parts.query}" if parts.query else "")
                    if link not in seen:
                        queue.append(link)
            assert errors == [], errors
        finally:
            await browser.close()
    assert broken == [], broken
    for must in ("/bots/north", "/bots/south", "/bots/house-heuristic", "/rules",
                 "/protocol", "/docs/api"):
        assert any(link.split("?")[0] == must for link in seen), (must, sorted(seen))
    for match in server.store.list_matches(tournament_id=record.id):
        assert f"/matches/{match.id}" in seen
    assert not queue or len(seen) >= MAX_PAGES
