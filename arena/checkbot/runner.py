"""Start a bot, run every check against it, and always clean up."""

from __future__ import annotations

import asyncio
import os
import signal
from collections import deque
from typing import Callable

from arena.checkbot.checks import run_checks
from arena.checkbot.games import game_script
from arena.checkbot.link import Listener
from arena.checkbot.report import CheckResult, Report, Verdict
from arena.checkbot.session import Session
from arena.server.local_bots import resolve_command

STDERR_TAIL_LINES = 20
STOP_GRACE_S = 2.0
DEFAULT_CHECK_TIMEOUT_S = 60.0
DEFAULT_TOKEN = "checkbot-token"
DEFAULT_NAME = "checked-bot"


async def check_bot(
    command: list[str],
    *,
    timeout_s: float = 15.0,
    deadline_ms: int = 2000,
    short_deadline_ms: int = 400,
    token: str = DEFAULT_TOKEN,
    name: str = DEFAULT_NAME,
    host: str = "127.0.0.1",
    port: int = 0,
    check_timeout_s: float = DEFAULT_CHECK_TIMEOUT_S,
    on_listening: Callable[[str, int], None] | None = None,
    game: str = "muushig",
) -> Report:
    """Run ``command`` (the bot) against the scripted checks.

    The bot finds the checker through ``ARENA_HOST``/``ARENA_PORT`` and
    authenticates with ``ARENA_TOKEN``/``ARENA_NAME``; nothing is appended to
    its argv. ``timeout_s`` bounds how long the bot may take to connect (and
    to reconnect); ``deadline_ms`` is every request's deadline except the
    short-deadline check's ``short_deadline_ms``; ``check_timeout_s`` bounds
    each check. The checker listens on ``host:port`` (0: a free port; it
    calls ``on_listening(host, port)`` once listening). A bare ``python`` in
    ``command`` is the arena's interpreter, as for ``arena match``.
    ``game`` picks the scripted matches ("muushig" or "thirteen"; a bot for
    thirteen must say ``"game": "thirteen"`` in its hello).
    """
    if not command:
        raise ValueError("no bot command given: put it after '--', e.g. check-bot -- python bot.py")
    script = game_script(game)  # an unknown game fails before the bot starts
    listener = Listener()
    port = await listener.start(host, port)
    if on_listening is not None:
        on_listening(host, port)
    connect_host = "127.0.0.1" if host in ("0.0.0.0", "", "::") else host
    env = dict(os.environ, ARENA_HOST=connect_host, ARENA_PORT=str(port), ARENA_TOKEN=token, ARENA_NAME=name)
    command = resolve_command(command)
    report = Report(port=port)
    stderr_tail: deque[str] = deque(maxlen=STDERR_TAIL_LINES)
    drains: list[asyncio.Future[None]] = []

    async def spawn(extra_env: dict[str, str]) -> asyncio.subprocess.Process:
        process = await asyncio.create_subprocess_exec(
            *command, env={**env, **extra_env}, stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            start_new_session=True,  # so the bot's own children stop with it
        )
        drains.append(asyncio.ensure_future(_drain(process.stdout, None)))
        drains.append(asyncio.ensure_future(_drain(process.stderr, stderr_tail)))
        return process

    try:
        process = await spawn({})
    except OSError as exc:
        await listener.stop()
        report.results.append(CheckResult("hello", Verdict.FAIL, f"could not start {command[0]!r}: {exc}"))
        return report
    session = Session(listener=listener, process=process, token=token, name=name, deadline_ms=deadline_ms,
                      short_deadline_ms=short_deadline_ms, connect_timeout_s=timeout_s,
                      check_timeout_s=check_timeout_s, respawn=spawn, game=script)
    try:
        for check_name, verdict, message in await run_checks(session):
            report.results.append(CheckResult(check_name, verdict, message))
    finally:
        await listener.stop()
        report.bot_exit_code = await _stop(session.process)
        if session.process is not process:
            await _stop(process)
        _, still = await asyncio.wait(drains, timeout=STOP_GRACE_S)
        for task in still:
            task.cancel()
    report.encoding = session.encoding
    report.stderr_tail = list(stderr_tail)
    return report


async def _drain(stream: asyncio.StreamReader | None, tail: deque[str] | None) -> None:
    """Read a pipe to its end so the bot never blocks writing to it."""
    if stream is None:
        return
    while line := await stream.readline():
        if tail is not None:
            tail.append(line.decode("utf-8", "replace").rstrip())


async def _stop(process: asyncio.subprocess.Process) -> int | None:
    """Terminate the bot (and its process group) if it is still running."""
    if process.returncode is not None:
        return process.returncode
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            break
        try:
            return await asyncio.wait_for(process.wait(), STOP_GRACE_S)
        except TimeoutError:
            continue
    return process.returncode
