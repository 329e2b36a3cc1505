from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from typing import Any, AsyncIterator

import pytest

from arena.hosting.hosted import HostedBots
from arena.hosting.sandbox import (Sandbox, SandboxLimits, SandboxSpec, python_mounts,
                                   sandbox_python)
from arena.hosting.versions import VersionStore
from arena.server.config import ServerConfig
from arena.server.server import ArenaServer, PlayerSpec
from arena.server.table import TimeLimits
from arena.storage.sqlite import SqliteStore


def sandbox_available() -> str | None:
    """Why sandbox tests cannot run here, or None."""
    if shutil.which("bwrap") is None:
        return "bubblewrap is not installed (scripts/test installs it as root)"
    if os.geteuid() != 0:
        return "the sandbox needs root (it gives each bot a user id of its own)"
    return None


# Test bots that do something else once started still pass the start check
# (a version is ready only after its hello): this says hello and keeps the
# connection open. Standard library only.
SAYS_HELLO = (
    "import json as _j, os as _o, socket as _s\n"
    "_hello = _s.create_connection((_o.environ['ARENA_HOST'], int(_o.environ['ARENA_PORT'])))\n"
    "_hello.sendall((_j.dumps({'type': 'hello', 'protocol': 1, 'token': _o.environ['ARENA_TOKEN'],"
    " 'name': _o.environ['ARENA_NAME']}) + '\\n').encode())\n")

needs_sandbox = pytest.mark.skipif(sandbox_available() is not None,
                                   reason=sandbox_available() or "")


@pytest.fixture
def no_cgroups(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine that gives the arena no cgroups: their root cannot be written
    (sandboxes then limit memory with RLIMIT_DATA)."""
    import arena.hosting.cgroups as cgroups_module

    blocked = tmp_path / "no-cgroups"
    blocked.write_text("")  # a file: no directory can be made under it
    monkeypatch.setattr(cgroups_module, "CGROUP_ROOT", blocked)


@pytest.fixture(scope="session")
def go_toolchain() -> str:
    """The machine's ``go`` (scripts/install-go installs Debian's). Tests
    that build Go bots skip without it, unless ``ARENA_REQUIRE_GO=1`` (as in
    CI) makes that a failure: CI must build a real Go bot."""
    go = shutil.which("go")
    if go is None:
        if os.environ.get("ARENA_REQUIRE_GO") == "1":
            pytest.fail("Go is required here but 'go' is not installed (scripts/install-go)")
        pytest.skip("Go is not installed (scripts/install-go installs it as root)")
    return go


async def run_in_sandbox(app: Path, script: str, *, limits: SandboxLimits = SandboxLimits(),
                         timeout_s: float = 20.0, mounts=(),
                         started: list[Sandbox] | None = None) -> tuple[int, str]:
    """Run a Python snippet as a bot would run (the bot's files at /bot)."""
    app.mkdir(parents=True, exist_ok=True)
    (app / "probe.py").write_text(script)
    log = app.parent / f"{app.name}.log"
    spec = SandboxSpec(command=[sandbox_python(), "/bot/probe.py"], app_dir=app,
                       mounts=[*python_mounts(), *mounts], limits=limits)
    with open(log, "wb") as out:
        sandbox = Sandbox(spec, stderr=out.fileno())
        await sandbox.start()
    if started is not None:
        started.append(sandbox)
    try:
        code = await sandbox.wait(timeout_s)
    finally:
        await sandbox.stop()
    return code, log.read_text(errors="replace")


def versions_at(folder: Path) -> VersionStore:
    """Versions in a SQLite store in ``folder``, built into ``folder/hosted``."""
    return VersionStore(SqliteStore(str(folder / "arena.db")), folder / "hosted")


class Arena:
    def __init__(self, server: ArenaServer, versions: VersionStore, hosted: HostedBots,
                 store: SqliteStore) -> None:
        self.server, self.versions, self.hosted, self.store = server, versions, hosted, store

    async def validate(self, *bots: str) -> None:
        """Play each bot's validation match (the ladder seats it only after)."""
        from arena.hosting.validation import play_validation

        for bot in bots:
            version = self.versions.active(bot)
            assert version is not None, f"{bot} has no ready version"
            result = await play_validation(self.server, self.hosted, version)
            assert result.passed, result

    async def play(self, bot: str, limits: TimeLimits | None = None) -> Any:
        await self.hosted.start(bot)
        players = [PlayerSpec(bot)] + [PlayerSpec(f"house-random-{i}", house="random")
                                       for i in range(1, 5)]
        outcome = None
        try:
            outcome = await self.server.play_match(players, claim_timeout_s=15, limits=limits)
            return outcome
        finally:  # its stderr is kept under the match
            await self.hosted.stop(bot, outcome.match_id if outcome is not None else None)


@pytest.fixture
async def arena(tmp_path: Path) -> AsyncIterator[Arena]:
    db = tmp_path / "arena.db"
    store = SqliteStore(str(db))
    server = ArenaServer(ServerConfig(host="127.0.0.1", port=0, http_port=None, db=str(db),
                                      house_wait_s=None, decision_ms=3000, bank_ms=2000), store)
    await server.start()
    sockets = Path(tempfile.mkdtemp(prefix="arena-"))  # short: a socket path is 107 bytes at most
    versions = VersionStore(store, tmp_path / "hosted")
    hosted = HostedBots(versions, sockets, server.start_unix, server.local_tokens)
    try:
        yield Arena(server, versions, hosted, store)
    finally:
        await hosted.stop_all()
        await server.stop()
        store.close()
        shutil.rmtree(sockets, ignore_errors=True)
