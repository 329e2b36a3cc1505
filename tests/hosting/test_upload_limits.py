"""Uploads and builds are bounded: per-bot rate, bodies read at once, builds
at once and waiting, and versions kept per bot."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import AsyncIterator

import aiohttp
import pytest

from arena.app import Arena, http_port_of
from arena.auth import hash_token
from arena.hosting.builder import submit
from arena.hosting.queue import BuildQueue, QueueFull, UploadLimits
from arena.hosting.versions import BuildStatus, VersionStore
from arena.server.config import ServerConfig
from arena.storage.sqlite import SqliteStore
from arena.web.hosting_api import Hosting
from tests.hosting.conftest import needs_sandbox, versions_at

BOT = b"import time\ntime.sleep(1)\n"


async def test_builds_run_at_most_so_many_at_once_and_a_full_queue_refuses() -> None:
    queue = BuildQueue(at_once=2, waiting=3)
    release = asyncio.Event()
    peak = running = 0

    async def fake_build() -> None:
        nonlocal peak, running
        running += 1
        peak = max(peak, running)
        await release.wait()
        running -= 1

    tasks = [queue.submit(fake_build) for _ in range(3)]
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    tasks += [queue.submit(fake_build) for _ in range(2)]  # 2 run, 3 wait
    with pytest.raises(QueueFull, match="waiting"):
        queue.submit(fake_build)
    release.set()
    await asyncio.gather(*tasks)
    assert peak == 2 and queue.waiting == 0 and queue.running == 0


def test_a_bot_keeps_its_newest_versions_and_the_one_that_plays(tmp_path: Path) -> None:
    versions = versions_at(tmp_path)
    first = submit(versions, "bot", BOT, "bot.py")
    first.status = BuildStatus.READY
    versions.save(first)  # v1 plays; every later one fails
    for _ in range(6):
        later = submit(versions, "bot", b"", "bot.py")
        assert later.status is BuildStatus.FAILED
    versions.prune("bot", keep=3)
    assert [v.version for v in versions.versions("bot")] == [1, 5, 6, 7]
    assert versions.active("bot").version == 1


@pytest.fixture
async def site(tmp_path: Path) -> AsyncIterator[tuple[str, Hosting]]:
    db = tmp_path / "arena.db"
    store = SqliteStore(str(db))
    store.add_bot("owner-bot", hash_token("secret-token"))
    store.add_bot("rival", hash_token("rival-token"))
    hosting = Hosting(VersionStore(store, tmp_path / "hosted"),
                      uploads=UploadLimits(upload_burst=3, uploads_per_hour=1.0,
                                           uploads_at_once=1, versions_kept=3))
    server = Arena(ServerConfig(host="127.0.0.1", port=0, http_port=0, db=str(db),
                                house_wait_s=None, admin_token="admin"), store,
                   hosting=hosting).server
    await server.start()
    try:
        yield f"http://127.0.0.1:{http_port_of(server)}", hosting
    finally:
        await server.stop()
        store.close()


async def _upload(http: aiohttp.ClientSession, base: str, token: str, data: object,
                  name: str = "owner-bot") -> aiohttp.ClientResponse:
    form = aiohttp.FormData()
    form.add_field("file", data, filename="bot.py")
    return await http.post(f"{base}/api/bots/{name}/versions", data=form,
                           headers={"Authorization": f"Bearer {token}"})


async def test_uploads_of_one_bot_are_rate_limited(site) -> None:
    base, _ = site
    async with aiohttp.ClientSession() as http:
        statuses = [(await _upload(http, base, "secret-token", b"")).status for _ in range(5)]
        assert statuses == [202, 202, 202, 429, 429]
        refused = await _upload(http, base, "secret-token", b"")
        assert int(refused.headers["Retry-After"]) > 0
        assert "uploads" in (await refused.json())["error"]["message"]
        # Another bot has its own allowance.
        assert (await _upload(http, base, "rival-token", b"", "rival")).status == 202


async def test_only_so_many_upload_bodies_are_read_at_once(site) -> None:
    base, _ = site
    go_on = asyncio.Event()

    async def slow_body() -> AsyncIterator[bytes]:
        yield b"x" * 1024
        await go_on.wait()
        yield b"y"

    async with aiohttp.ClientSession() as http:
        first = asyncio.create_task(_upload(http, base, "secret-token", slow_body()))
        await asyncio.sleep(0.3)  # its body is being read
        second = await _upload(http, base, "rival-token", b"", "rival")
        assert second.status == 429 and "Retry-After" in second.headers
        go_on.set()
        assert (await first).status == 202


@needs_sandbox
async def test_uploads_past_the_versions_kept_remove_the_oldest(site) -> None:
    base, hosting = site
    async with aiohttp.ClientSession() as http:
        for _ in range(3):
            assert (await _upload(http, base, "admin", b"")).status == 202  # the admin: no rate
        assert (await _upload(http, base, "admin", b"")).status == 202
    for _ in range(100):
        if len(hosting.versions.versions("owner-bot")) == 3:
            break
        await asyncio.sleep(0.05)
    assert [v.version for v in hosting.versions.versions("owner-bot")] == [2, 3, 4]


def test_pruned_versions_leave_the_build_cache_of_every_node(tmp_path: Path) -> None:
    versions = versions_at(tmp_path)
    other_node = VersionStore(versions.store, tmp_path / "other-cache")
    first = submit(versions, "bot", BOT, "bot.py")
    first.status = BuildStatus.READY
    versions.save(first)
    later = [submit(versions, "bot", BOT + b"#%d\n" % i, "bot.py") for i in range(3)]
    for version in later:  # failed, and unpacked on the other node too
        version.status = BuildStatus.FAILED
        versions.save(version)
        (other_node.local_dir(version) / "app").mkdir(parents=True)
    versions.prune("bot", keep=1)
    assert [v.version for v in versions.versions("bot")] == [1, 4]
    assert not versions.local_dir(later[0]).exists()  # here at once
    assert other_node.local_dir(later[0]).exists()
    assert other_node.sweep_cache() == [other_node.local_dir(v) for v in later[:2]]
    assert not other_node.local_dir(later[0]).exists()
    assert other_node.local_dir(later[2]).exists()  # v4 is kept
