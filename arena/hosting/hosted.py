"""A hosted bot playing: its active version started in a sandbox for a match.

The arena listens on a Unix socket (``ArenaServer.start_unix``); the socket
is bind-mounted read-only into the sandbox at ``/arena/arena.sock`` and the
relay makes it ``127.0.0.1:7000`` inside. The bot gets the same four
variables as any bot the arena starts (``ARENA_HOST``, ``ARENA_PORT``,
``ARENA_TOKEN``, ``ARENA_NAME``) and from then on is an ordinary bot. Its
stderr goes to a file its owner can read; nobody else sees it.
"""

from __future__ import annotations

import os
import secrets
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import structlog

from arena.hosting.builder import interpreter_command
from arena.hosting.errors import HostingError
from arena.hosting.sandbox import Mount, Sandbox, SandboxLimits, SandboxSpec, python_mounts
from arena.hosting.versions import BotVersion, BuildStatus, VersionStore

log = structlog.get_logger("arena.hosting")

INSIDE_PORT = 7000
INSIDE_SOCKET = "/arena/arena.sock"
_RELAY = Path(__file__).with_name("relay.py")


@dataclass
class HostedRun:
    """One start of one version (usually for one match)."""

    version: BotVersion
    sandbox: Sandbox
    stderr_path: Path
    started_at: float

    @property
    def alive(self) -> bool:
        proc = self.sandbox.process
        return proc is not None and proc.returncode is None


def sandbox_spec(version: BotVersion, app: Path, socket_path: Path, token: str,
                 limits: SandboxLimits) -> SandboxSpec:
    relay = [sys.executable, "-I", "/arena/relay.py", "--port", str(INSIDE_PORT),
             "--to", INSIDE_SOCKET, "--"]
    return SandboxSpec(
        command=[*relay, *interpreter_command(version.run)], app_dir=app,
        env={"ARENA_HOST": "127.0.0.1", "ARENA_PORT": str(INSIDE_PORT), "ARENA_TOKEN": token,
             "ARENA_NAME": version.bot, "PYTHONUNBUFFERED": "1"},
        mounts=[*python_mounts(), Mount(_RELAY, "/arena/relay.py"),
                Mount(socket_path, INSIDE_SOCKET)],
        limits=limits)


class HostedBots:
    """Starts and stops sandboxed runs of hosted bots for one arena server.

    ``token_for(name)`` is the server's one-process token issuer
    (``ArenaServer.local_token``): hosted bots authenticate like the bots the
    arena starts itself.
    """

    def __init__(self, versions: VersionStore, socket_path: Path, token_for: Callable[[str], str],
                 limits: SandboxLimits = SandboxLimits()) -> None:
        self.versions = versions
        self.socket_path = socket_path
        self.token_for = token_for
        self.limits = limits
        self.runs: dict[str, HostedRun] = {}

    def ready_bots(self) -> list[BotVersion]:
        found = []
        for bot in self.versions.bots():
            active = self.versions.active(bot)
            if active is not None:
                found.append(active)
        return found

    async def start(self, bot: str) -> HostedRun:
        version = self.versions.active(bot)
        if version is None or version.status is not BuildStatus.READY:
            raise HostingError(f"bot {bot!r} has no ready version to play")
        if bot in self.runs and self.runs[bot].alive:
            return self.runs[bot]
        app = self.versions.version_dir(bot, version.version) / "app"
        run_id = time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)
        stderr_path = self.versions.stderr_path(bot, version.version, f"run-{run_id}")
        spec = sandbox_spec(version, app, self.socket_path, self.token_for(bot), self.limits)
        with open(stderr_path, "wb") as stderr:
            sandbox = Sandbox(spec, stderr=stderr.fileno())
            await sandbox.start()
        run = self.runs[bot] = HostedRun(version, sandbox, stderr_path, time.time())
        log.info("hosted_bot_started", bot=bot, version=version.version, pid=sandbox.pid)
        return run

    async def stop(self, bot: str, match_id: str | None = None) -> None:
        run = self.runs.pop(bot, None)
        if run is None:
            return
        await run.sandbox.stop()
        if match_id is not None:
            target = self.versions.stderr_path(bot, run.version.version, match_id)
            os.replace(run.stderr_path, target)
            self.versions.note_match(bot, run.version.version, match_id)
        log.info("hosted_bot_stopped", bot=bot, version=run.version.version, match=match_id)

    async def stop_all(self) -> None:
        for bot in list(self.runs):
            await self.stop(bot)
