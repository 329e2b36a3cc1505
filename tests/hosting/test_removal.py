"""Removing or rotating a hosted bot ends it at once: sandboxes and tokens."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import AsyncIterator

import aiohttp
import pytest

from arena.app import Arena, http_port_of
from arena.auth import hash_token
from arena.hosting.builder import submit_and_build
from arena.hosting.errors import HostingError
from arena.hosting.ladder import Ladder, LadderSettings, choose_table
from arena.hosting.service import HostedService
from arena.hosting.versions import BuildStatus, VersionStore
from arena.server.config import ServerConfig
from arena.server.server import ArenaServer
from arena.storage.sqlite import SqliteStore
from arena.web.hosting_api import Hosting
from tests.hosting.conftest import SAYS_HELLO, needs_sandbox
from tests.server.rawbot import RawBot

pytestmark = needs_sandbox
SLEEPER = (SAYS_HELLO + "import time\ntime.sleep(3600)\n").encode()


class Site:
    def __init__(self, server: ArenaServer, service: HostedService, base: str,
                 issued: list[tuple[str, str]]) -> None:
        self.server, self.service, self.base, self.issued = server, service, base, issued


@pytest.fixture
async def site(tmp_path: Path) -> AsyncIterator[Site]:
    db = tmp_path / "arena.db"
    store = SqliteStore(str(db))
    store.add_bot("evil", hash_token("evil-token"))
    store.add_bot("other", hash_token("other-token"))
    hosting = Hosting(VersionStore(store, tmp_path / "hosted"))
    server = Arena(ServerConfig(host="127.0.0.1", port=0, http_port=0, db=str(db),
                                house_wait_s=None, admin_token="admin"),
                   store, hosting=hosting).server
    issued: list[tuple[str, str]] = []  # (bot, token) of every local token handed out
    own = server.local_tokens.issue

    def record(name: str) -> str:
        token = own(name)
        issued.append((name, token))
        return token

    server.local_tokens.issue = record  # type: ignore[method-assign]
    await server.start()
    service = HostedService(server, hosting.versions)
    await service.start()
    for bot in ("evil", "other"):
        version = await submit_and_build(hosting.versions, bot, SLEEPER, "bot.py")
        assert version.status is BuildStatus.READY
        # Removal, not validation, is what these tests are about: as if both
        # had passed their validation match, so the ladder may seat them.
        hosting.versions.record_validation(version, {"passed": True, "match_id": None})
    try:
        yield Site(server, service, f"http://127.0.0.1:{http_port_of(server)}", issued)
    finally:
        await service.stop()
        await server.stop()
        store.close()


async def _hello(server: ArenaServer, token: str) -> str:
    bot = await RawBot().connect(server.port or 0)
    try:
        return (await bot.hello(token, name=None) or {}).get("type", "closed")
    finally:
        assert bot.writer is not None
        bot.writer.close()


async def test_removing_a_bot_stops_its_sandbox_and_revokes_its_tokens(site: Site) -> None:
    run = await site.service.hosted.start("evil")
    other = await site.service.hosted.start("other")
    token = next(t for name, t in site.issued if name == "evil")
    assert await _hello(site.server, token) == "welcome"  # the token worked before
    async with aiohttp.ClientSession() as http:
        async with http.delete(f"{site.base}/api/bots/evil",
                               headers={"Authorization": "Bearer admin"}) as response:
            assert response.status == 200
    # At once: when the DELETE has answered, the sandbox is gone.
    assert run.sandbox.process is not None and run.sandbox.process.returncode is not None
    assert not run.alive
    assert await _hello(site.server, token) == "error"
    assert other.alive  # the other bot is untouched
    with pytest.raises(HostingError, match="removed"):
        await site.service.hosted.start("evil")


async def test_a_removed_bot_is_never_seated_by_the_ladder(site: Site) -> None:
    await site.service.versions.retire("evil", removed=True)
    ladder = Ladder(site.server, site.service.hosted, settings=LadderSettings())
    names = {e.name for e in ladder.entrants()}
    assert "evil" not in names and "other" in names


async def test_a_bot_removed_by_another_process_leaves_the_ladder_on_its_next_tick(
        site: Site) -> None:
    site.server.store.remove_bot("evil")  # as `arena bots remove` does, beside the server
    ladder = Ladder(site.server, site.service.hosted, settings=LadderSettings())
    snapshot = await ladder.read_snapshot()
    names = {e.name for e in ladder.entrants(snapshot)}
    assert "evil" not in names and "other" in names
    picked = choose_table(ladder.entrants(snapshot), 5, settings=LadderSettings(),
                          rng=random.Random(1))
    assert "evil" not in picked


async def test_rotating_a_token_stops_the_running_sandbox_and_its_local_token(site: Site) -> None:
    run = await site.service.hosted.start("evil")
    token = next(t for name, t in site.issued if name == "evil")
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{site.base}/api/bots/evil/token",
                             headers={"Authorization": "Bearer evil-token"}) as response:
            assert response.status == 200
    assert not run.alive
    assert await _hello(site.server, token) == "error"
    again = await site.service.hosted.start("evil")  # rotation does not retire the bot
    assert again.alive


async def test_a_stopped_run_gives_its_token_back(site: Site) -> None:
    for _ in range(3):
        await site.service.hosted.start("evil")
        await site.service.hosted.stop("evil")
    tokens = [t for name, t in site.issued if name == "evil"]
    assert len(tokens) == 3
    assert [await _hello(site.server, t) for t in tokens] == ["error"] * 3
    # Nothing accumulates per run: no token of it is left once no run is alive.
    assert site.server.local_tokens.issued_to("evil") == 0


async def _connected(server: ArenaServer, token: str) -> RawBot:
    """A remote bot connected with ``token``, welcomed."""
    bot = await RawBot().connect(server.port or 0)
    assert (await bot.hello(token, name=None) or {}).get("type") == "welcome"
    return bot


async def _closed_with(bot: RawBot, words: str) -> None:
    """The server closes ``bot``'s connection, saying ``words`` first."""
    said = await bot.until(lambda m: m.get("type") == "error", timeout=20)
    assert said["code"] == "auth_failed" and words in said["message"], said
    assert await bot.recv(timeout=20) is None  # and the connection ends


async def test_removing_a_bot_closes_its_open_remote_connection(site: Site) -> None:
    evil = await _connected(site.server, "evil-token")
    other = await _connected(site.server, "other-token")
    async with aiohttp.ClientSession() as http:
        async with http.delete(f"{site.base}/api/bots/evil",
                               headers={"Authorization": "Bearer admin"}) as response:
            assert response.status == 200
    await _closed_with(evil, "removed")
    assert "evil" not in site.server.connected_bots()
    assert "other" in site.server.connected_bots()  # the other bot stays connected
    assert other.writer is not None and not other.writer.is_closing()


async def test_rotating_a_token_closes_the_connections_that_used_the_old_one(site: Site) -> None:
    old = await _connected(site.server, "evil-token")
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{site.base}/api/bots/evil/token",
                             headers={"Authorization": "Bearer evil-token"}) as response:
            assert response.status == 200
            new_token = (await response.json())["token"]
    await _closed_with(old, "token")
    fresh = await _connected(site.server, new_token)  # the new token plays on
    assert "evil" in site.server.connected_bots()
    assert fresh.writer is not None


async def test_a_bot_removed_beside_the_server_loses_its_open_connection(site: Site) -> None:
    evil = await _connected(site.server, "evil-token")
    site.server.store.remove_bot("evil")  # as `arena bots remove` or another node does
    await _closed_with(evil, "removed")  # at the server's next look at the store


async def test_a_token_replaced_elsewhere_closes_the_old_connection_not_the_hosted_run(
        site: Site) -> None:
    run = await site.service.hosted.start("evil")  # its code connects with a local token
    for _ in range(400):
        if "evil" in site.server.connected_bots():
            break
        await asyncio.sleep(0.05)
    old = await _connected(site.server, "evil-token")
    site.server.store.set_token_hash("evil", hash_token("evil-new-token"))  # another node
    await _closed_with(old, "token")
    assert run.alive and "evil" in site.server.connected_bots()  # the run plays on
