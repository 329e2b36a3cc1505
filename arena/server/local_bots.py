"""Bots the arena starts itself, as subprocesses that connect over TCP.

A local bot is a command; the arena gives it the address and a one-process
token in its environment (``ARENA_HOST``, ``ARENA_PORT``, ``ARENA_TOKEN``,
``ARENA_NAME``) and from then on it is a remote bot like any other. The
supervisor restarts a bot that exits while it is still wanted and counts its
crashes.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path

import structlog

log = structlog.get_logger("arena.local_bots")


def resolve_command(command: list[str]) -> list[str]:
    """``python``/``python3`` mean this arena's interpreter, so Python bots
    find the SDK wherever the arena was installed."""
    if command and command[0] in ("python", "python3"):
        return [sys.executable, *command[1:]]
    return list(command)


@dataclass
class LocalBot:
    name: str
    command: list[str]
    cwd: Path | None = None
    env: dict[str, str] = field(default_factory=dict)
    crashes: int = 0
    process: asyncio.subprocess.Process | None = None
    # The last exit: its code and the last lines it wrote to stderr.
    exit_code: int | None = None
    stderr_tail: list[str] = field(default_factory=list)
    _wanted: bool = False
    _watcher: asyncio.Task[None] | None = None

    async def start(self, host: str, port: int, token: str) -> None:
        self._wanted = True
        env = {**os.environ, **self.env, "ARENA_HOST": host, "ARENA_PORT": str(port),
               "ARENA_TOKEN": token, "ARENA_NAME": self.name, "PYTHONUNBUFFERED": "1"}
        self._spawn_args = (env,)
        await self._spawn()
        self._watcher = asyncio.get_running_loop().create_task(self._watch())

    async def _spawn(self) -> None:
        (env,) = self._spawn_args
        self.process = await asyncio.create_subprocess_exec(
            *resolve_command(self.command), cwd=self.cwd, env=env, stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
            start_new_session=True)
        log.info("local_bot_started", bot=self.name, pid=self.process.pid,
                 command=shlex.join(self.command))

    async def _watch(self) -> None:
        backoff = 0.2
        while self._wanted and self.process is not None:
            stderr = await self.process.stderr.read() if self.process.stderr else b""
            code = await self.process.wait()
            if not self._wanted:
                return
            self.crashes += 1
            tail = stderr.decode("utf-8", "replace").strip().splitlines()[-5:]
            self.exit_code, self.stderr_tail = code, stderr.decode("utf-8", "replace").splitlines()[-20:]
            log.warning("local_bot_exited", bot=self.name, code=code, crashes=self.crashes,
                        stderr=tail)
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, 5.0)
            if self._wanted:
                await self._spawn()

    async def stop(self, timeout_s: float = 3.0) -> None:
        self._wanted = False
        proc = self.process
        if proc is not None and proc.returncode is None:
            try:
                os.killpg(proc.pid, 15)
            except ProcessLookupError:
                pass
            try:
                await asyncio.wait_for(proc.wait(), timeout_s)
            except TimeoutError:
                try:
                    os.killpg(proc.pid, 9)
                except ProcessLookupError:
                    pass
                await proc.wait()
        if self._watcher is not None:
            self._watcher.cancel()
            try:
                await self._watcher
            except (asyncio.CancelledError, Exception):
                pass


class LocalBots:
    """Starts, watches and stops a set of local bots for one server."""

    def __init__(self) -> None:
        self.bots: dict[str, LocalBot] = {}

    async def start(self, bot: LocalBot, server: "object") -> None:
        from arena.server.server import ArenaServer

        assert isinstance(server, ArenaServer) and server.port is not None
        self.bots[bot.name] = bot
        await bot.start(server.config.host, server.port, server.local_token(bot.name))

    async def stop(self) -> None:
        await asyncio.gather(*(bot.stop() for bot in self.bots.values()))

    def crashes(self) -> dict[str, int]:
        return {name: bot.crashes for name, bot in self.bots.items()}
