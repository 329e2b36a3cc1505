"""Uploading over HTTP, following the build, and who may read what."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import AsyncIterator

import aiohttp
import pytest

from arena.app import Arena, http_port_of
from arena.auth import hash_token
from arena.hosting.ladder import LadderSettings
from arena.hosting.service import HostedService
from arena.hosting.versions import VersionStore
from arena.server.config import ServerConfig
from arena.server.server import ArenaServer
from arena.storage.base import MatchStatus
from arena.storage.sqlite import SqliteStore
from arena.web.hosting_api import Hosting
from tests.hosting.conftest import needs_sandbox
from tests.browser import CHROMIUM, launch

pytestmark = needs_sandbox
ROOT = Path(__file__).resolve().parents[2]
BOT = (ROOT / "sample_bots" / "python_random" / "bot.py").read_bytes()


@pytest.fixture
async def site(tmp_path: Path) -> AsyncIterator[tuple[ArenaServer, HostedService, str]]:
    db = tmp_path / "arena.db"
    store = SqliteStore(str(db))
    store.add_bot("owner-bot", hash_token("secret-token"))
    store.add_bot("rival", hash_token("rival-token"))
    hosting = Hosting(VersionStore(store, tmp_path / "hosted"))
    server = Arena(ServerConfig(host="127.0.0.1", port=0, http_port=0, db=str(db),
                                house_wait_s=None, decision_ms=2000, bank_ms=1000),
                   store, hosting=hosting).server
    await server.start()
    service = HostedService(server, hosting.versions)
    await service.start()
    try:
        yield server, service, f"http://127.0.0.1:{http_port_of(server)}"
    finally:
        await service.stop()
        await server.stop()
        store.close()


async def _upload(http: aiohttp.ClientSession, base: str, name: str, token: str | None,
                  data: bytes = BOT, filename: str = "bot.py") -> aiohttp.ClientResponse:
    form = aiohttp.FormData()
    form.add_field("file", data, filename=filename)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return await http.post(f"{base}/api/bots/{name}/versions", data=form, headers=headers)


async def _wait_built(http: aiohttp.ClientSession, base: str, name: str, number: int) -> dict:
    for _ in range(100):
        async with http.get(f"{base}/api/bots/{name}/versions/{number}") as response:
            body = await response.json()
        if body["version"]["status"] != "building":
            return body["version"]
        await asyncio.sleep(0.1)
    raise AssertionError("the build never finished")


async def test_the_owner_uploads_a_version_and_it_builds(site) -> None:
    server, service, base = site
    async with aiohttp.ClientSession() as http:
        response = await _upload(http, base, "owner-bot", "secret-token")
        assert response.status == 202, await response.text()
        number = (await response.json())["version"]["version"]
        assert (await _wait_built(http, base, "owner-bot", number))["status"] == "ready"
        second = await _upload(http, base, "owner-bot", "secret-token")
        assert (await second.json())["version"]["version"] == number + 1
        await _wait_built(http, base, "owner-bot", number + 1)
        async with http.get(f"{base}/api/bots/owner-bot/versions") as listing:
            body = await listing.json()
        assert [v["version"] for v in body["versions"]] == [1, 2] and body["active"] == 2


async def test_uploads_need_the_bots_own_token(site) -> None:
    _, _, base = site
    async with aiohttp.ClientSession() as http:
        assert (await _upload(http, base, "owner-bot", None)).status == 401
        assert (await _upload(http, base, "owner-bot", "rival-token")).status == 403
        assert (await _upload(http, base, "owner-bot", "wrong")).status == 401


async def test_a_bad_archive_is_a_failed_version_with_its_reason_for_the_owner(site) -> None:
    _, _, base = site
    async with aiohttp.ClientSession() as http:
        response = await _upload(http, base, "owner-bot", "secret-token", b"PK\x03\x04junk", "x.zip")
        version = (await response.json())["version"]
        assert version["status"] == "failed" and "zip" in version["reason"]


async def test_logs_and_reasons_are_for_the_owner_only(site) -> None:
    _, _, base = site
    async with aiohttp.ClientSession() as http:
        await _upload(http, base, "owner-bot", "secret-token", b"int main( {", "main.c")
        version = await _wait_built(http, base, "owner-bot", 1)
        assert version["status"] == "failed" and "reason" not in version  # public view
        async with http.get(f"{base}/api/bots/owner-bot/versions/1/log") as anonymous:
            assert anonymous.status == 401
        async with http.get(f"{base}/api/bots/owner-bot/versions/1/log",
                            headers={"Authorization": "Bearer secret-token"}) as owner:
            assert owner.status == 200 and "error" in await owner.text()
        async with http.get(f"{base}/api/bots/owner-bot/versions/1",
                            headers={"Authorization": "Bearer secret-token"}) as owner:
            assert "exited with code" in (await owner.json())["version"]["reason"]


async def test_a_hosted_ladder_plays_without_anyone_connected(site, tmp_path: Path) -> None:
    server, service, base = site
    async with aiohttp.ClientSession() as http:
        for name, token in (("owner-bot", "secret-token"), ("rival", "rival-token")):
            response = await _upload(http, base, name, token)
            await _wait_built(http, base, name, (await response.json())["version"]["version"])
    ladder = HostedService(server, service.versions, ladder=LadderSettings(interval_s=0.05,
                                                                           max_tables=1))
    await ladder.start()
    try:
        # No bound on how fast: only that the ladder plays, on a busy machine too.
        while not (ladder.ladder and len(ladder.ladder.finished) >= 2):
            await asyncio.sleep(0.1)
    finally:
        await ladder.stop()
    played = server.store.list_matches(status=MatchStatus.FINISHED)
    # Each new version played its validation match first (alone with house
    # bots, off the ladder), then the ladder seated both together.
    validations = [m for m in played if m.tournament_id == "validation"]
    assert sorted(p for m in validations for p in m.players if not p.startswith("house")) \
        == ["owner-bot", "rival"]
    finished = [m for m in played if m.tournament_id is None]
    assert len(finished) >= 2
    assert all({"owner-bot", "rival"} <= set(m.players) for m in finished)


def test_the_cli_submits_and_lists_versions(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    arena = [sys.executable, "-m", "arena.cli"]
    run = lambda *a: subprocess.run([*arena, *a], capture_output=True, text=True, cwd=ROOT)  # noqa: E731
    assert run("bots", "add", "clibot", "--db", str(db)).returncode == 0
    bot = tmp_path / "bot.py"
    bot.write_bytes(BOT)
    submitted = run("bots", "submit", "clibot", str(bot), "--db", str(db))
    assert submitted.returncode == 0, submitted.stderr
    assert "clibot v1: ready" in submitted.stdout
    listed = run("bots", "versions", "clibot", "--db", str(db))
    assert listed.stdout.startswith("v1\tready\tpython")
    missing = run("bots", "submit", "nobody", str(bot), "--db", str(db))
    assert missing.returncode == 2 and "register it first" in missing.stderr


async def test_the_bot_page_lists_versions_and_shows_logs_to_the_owner(site) -> None:
    _, _, base = site
    async with aiohttp.ClientSession() as http:
        await _upload(http, base, "owner-bot", "secret-token", b"int main( {", "main.c")
        await _wait_built(http, base, "owner-bot", 1)
        await _upload(http, base, "owner-bot", "secret-token")
        await _wait_built(http, base, "owner-bot", 2)
        async with http.get(f"{base}/bots/owner-bot") as response:
            html = await response.text()
    assert "Hosted versions" in html and "v2 (plays)" in html and "failed" in html
    assert "exited with code" not in html  # reasons are the owner's
    if CHROMIUM is None:
        pytest.skip("chromium is not installed")
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await launch(p)
        try:
            tab = await browser.new_page()
            await tab.goto(f"{base}/bots/owner-bot")
            await tab.click("#owner-view summary")
            await tab.fill("#owner-token", "secret-token")
            await tab.click("#owner-form button")
            await tab.wait_for_selector("#owner-output pre")
            await tab.wait_for_function(
                "() => document.querySelectorAll('#owner-output section').length === 2"
            )
            shown = await tab.inner_text("#owner-output")
        finally:
            await browser.close()
    assert "v1: failed" in shown and "exited with code" in shown and "error" in shown


@pytest.mark.parametrize("filename", ["..", "x" * 300 + ".py"])
async def test_a_hostile_upload_name_answers_202_with_a_failed_version(site, filename: str) -> None:
    _, _, base = site
    async with aiohttp.ClientSession() as http:
        response = await _upload(http, base, "owner-bot", "secret-token", BOT, filename)
        assert response.status == 202, await response.text()
        version = await _wait_built(http, base, "owner-bot", 1)
        assert version["status"] == "failed"


async def test_a_server_builds_what_was_left_building_when_it_starts(site) -> None:
    server, service, base = site
    from arena.hosting.builder import submit

    stored = submit(service.versions, "rival", BOT, "bot.py")  # stored, never built
    restarted = HostedService(server, service.versions)
    await restarted.start()
    try:
        async with aiohttp.ClientSession() as http:
            version = await _wait_built(http, base, "rival", stored.version)
    finally:
        await restarted.stop()
    assert version["status"] == "ready"
