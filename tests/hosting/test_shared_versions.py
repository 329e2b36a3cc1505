"""Two arena nodes on one PostgreSQL database share hosted bots: a version
submitted on one is built once, by one node, and any node plays it (building
it from the stored upload first if it never built it)."""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from pathlib import Path
from typing import AsyncIterator

import pytest

from arena.cli import main
from arena.hosting.builder import build, submit
from arena.hosting.hosted import HostedBots
from arena.hosting.versions import BuildStatus, VersionStore
from arena.server.config import ServerConfig
from arena.server.server import ArenaServer
from arena.storage import open_store
from tests.hosting.conftest import SAYS_HELLO, Arena, needs_sandbox

pytestmark = needs_sandbox
ROOT = Path(__file__).resolve().parents[2]
BOT = (ROOT / "sample_bots" / "python_random" / "bot.py").read_bytes()


class Nodes:
    def __init__(self, a: Arena, b: Arena) -> None:
        self.a, self.b = a, b


async def _node(pg: str, name: str, cache: Path) -> Arena:
    store = open_store(pg, node=name)
    server = ArenaServer(ServerConfig(host="127.0.0.1", port=0, http_port=None, db=pg,
                                      house_wait_s=None, decision_ms=3000, bank_ms=2000), store)
    await server.start()
    sockets = Path(tempfile.mkdtemp(prefix="arena-"))  # short: a socket path is 107 bytes at most
    versions = VersionStore(store, cache)
    return Arena(server, versions, HostedBots(versions, sockets, server.start_unix,
                                              server.local_tokens), store)  # type: ignore[arg-type]


@pytest.fixture
async def nodes(pg_url: str, tmp_path: Path) -> AsyncIterator[Nodes]:
    setup = open_store(pg_url)
    setup.add_bot("shared", "hash-of-its-token")
    setup.close()
    a = await _node(pg_url, "node-a", tmp_path / "cache-a")
    b = await _node(pg_url, "node-b", tmp_path / "cache-b")
    try:
        yield Nodes(a, b)
    finally:
        for node in (a, b):
            await node.hosted.stop_all()
            await node.server.stop()
            node.store.close()
            shutil.rmtree(node.hosted.socket_dir, ignore_errors=True)


async def test_a_version_built_on_one_node_plays_on_the_other(nodes: Nodes) -> None:
    version = await build(nodes.a.versions, submit(nodes.a.versions, "shared", BOT, "bot.py"))
    assert version.status is BuildStatus.READY
    seen = nodes.b.versions.active("shared")
    assert seen is not None and seen.version == version.version
    assert not nodes.b.versions.is_built_here(seen)
    outcome = await nodes.b.play("shared")  # built on B from the stored upload, then played
    assert nodes.b.versions.is_built_here(seen)
    assert outcome.match_id in nodes.a.versions.get("shared", 1).matches
    # Its stderr in B's match is read on A (the store keeps it, not B's disk).
    assert nodes.a.versions.stderr("shared", 1, outcome.match_id) is not None


async def test_exactly_one_node_builds_a_version(nodes: Nodes) -> None:
    stored = submit(nodes.a.versions, "shared", BOT, "bot.py")
    copy_on_b = nodes.b.versions.get("shared", stored.version)
    on_a, on_b = await asyncio.gather(build(nodes.a.versions, stored),
                                      build(nodes.b.versions, copy_on_b))
    builders = [v for v in (on_a, on_b) if v.status is BuildStatus.READY and v.built_at]
    assert len(builders) == 1, (on_a, on_b)
    caches = [nodes.a.versions, nodes.b.versions]
    assert sum((versions.local_dir(stored) / "build.log").exists() for versions in caches) == 1
    assert nodes.a.versions.get("shared", 1).status is BuildStatus.READY


async def test_a_version_stored_without_a_build_is_built_by_another_node(nodes: Nodes) -> None:
    from arena.hosting.builder import recover_unfinished

    stored = submit(nodes.a.versions, "shared", BOT, "bot.py")  # as --no-build on node A
    done = await recover_unfinished(nodes.b.versions)
    assert [(v.bot, v.version, v.status) for v in done] == [("shared", stored.version,
                                                            BuildStatus.READY)]
    assert "compileall" in nodes.a.versions.build_log("shared", stored.version)


async def test_concurrent_uploads_on_two_nodes_get_two_numbers(nodes: Nodes) -> None:
    other = (SAYS_HELLO + "import time\ntime.sleep(60)\n").encode()
    a, b = await asyncio.gather(asyncio.to_thread(submit, nodes.a.versions, "shared", BOT, "a.py"),
                                asyncio.to_thread(submit, nodes.b.versions, "shared", other,
                                                  "b.py"))
    assert sorted([a.version, b.version]) == [1, 2]
    assert {v.filename for v in nodes.a.versions.versions("shared")} == {"a.py", "b.py"}


def test_submit_to_a_database_server_builds_outside_the_working_folder(
        pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    setup = open_store(pg_url)
    setup.add_bot("shared", "hash-of-its-token")
    setup.close()
    (tmp_path / "bot.py").write_bytes(BOT)
    shell = tmp_path / "shell"
    shell.mkdir()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.chdir(shell)
    assert main(["bots", "submit", "shared", str(tmp_path / "bot.py"), "--db", pg_url]) == 0
    assert "shared v1: ready" in capsys.readouterr().out.splitlines()
    assert os.listdir(shell) == []
    assert list((tmp_path / "cache" / "arena" / "hosted").rglob("built"))  # its cache


async def test_one_node_plays_a_versions_validation_match(nodes: Nodes) -> None:
    from arena.hosting.errors import HostingError
    from arena.hosting.validation import ValidationResult, play_validation

    version = await build(nodes.a.versions, submit(nodes.a.versions, "shared", BOT, "bot.py"))
    on_b = nodes.b.versions.get("shared", version.version)
    results = await asyncio.gather(play_validation(nodes.a.server, nodes.a.hosted, version),
                                   play_validation(nodes.b.server, nodes.b.hosted, on_b),
                                   return_exceptions=True)
    played = [r for r in results if isinstance(r, ValidationResult)]
    refused = [r for r in results if isinstance(r, HostingError)]
    assert len(played) == 1 and len(refused) == 1, results
    assert played[0].passed and nodes.b.versions.get("shared", 1).validated


# A bot that takes its time (well within the decision limit): its ladder
# match lasts long enough for the other node's ladder to tick meanwhile.
SLOW_BOT = BOT.replace(b"    return random.choice(legal)",
                       b"    import time\n    time.sleep(0.4)\n    return random.choice(legal)")


async def test_a_hosted_bot_plays_one_ladder_match_of_the_two_nodes_at_a_time(
        nodes: Nodes) -> None:
    from arena.hosting.ladder import Ladder, LadderSettings

    assert SLOW_BOT != BOT
    version = await build(nodes.a.versions, submit(nodes.a.versions, "shared", SLOW_BOT, "bot.py"))
    assert version.status is BuildStatus.READY
    await asyncio.to_thread(nodes.a.versions.record_validation, version,
                            {"passed": True, "match_id": None})
    settings = LadderSettings(max_tables=1, claim_timeout_s=30)
    on_a = Ladder(nodes.a.server, nodes.a.hosted, settings=settings)
    on_b = Ladder(nodes.b.server, nodes.b.hosted, settings=settings)
    plays_a = on_a.start_one(await on_a.read_snapshot())
    assert plays_a is not None
    plays_b = None
    try:
        async with asyncio.timeout(60):
            while "shared" not in nodes.a.hosted.runs:  # A started it for its match
                await asyncio.sleep(0.05)
            plays_b = on_b.start_one(await on_b.read_snapshot())
            while not (plays_b is None or plays_b.done() or "shared" in nodes.b.hosted.runs):
                await asyncio.sleep(0.05)
        assert not plays_a.done(), "A's match ended before B's ladder ticked: nothing was tested"
        assert "shared" not in nodes.b.hosted.runs and (plays_b is None or plays_b.result() is None)
    finally:
        for task in (plays_a, plays_b):
            if task is not None:
                task.cancel()
        await asyncio.gather(*(t for t in (plays_a, plays_b) if t is not None),
                             return_exceptions=True)
