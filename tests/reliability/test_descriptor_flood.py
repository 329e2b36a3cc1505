"""A crowd of idle connections on the web port does not stop the games.

``arena serve`` runs as its own process with few file descriptors (256, as a
small ``ulimit -n`` gives); this test holds 400 idle connections to its web
port from one loopback address (127.0.0.2) while a bot connects to the bot
port and plays a match, and ``/api/health`` is asked from another address.

Seen before: 1,100 idle web connections under ``ulimit -n 1024`` used every
descriptor; bot hellos and ``/api/health`` timed out and the log filled
with ``Too many open files``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import resource
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import AsyncIterator, Iterator

import pytest

from tests.reliability.serving import served_ports
from tests.server.rawbot import RawBot

DESCRIPTORS = 256
FLOOD = 400
FLOOD_FROM = "127.0.0.2"  # all of 127.0.0.0/8 is loopback on Linux


def _few_descriptors() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (DESCRIPTORS, DESCRIPTORS))


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[int, int, Path]]:
    log_path = tmp_path / "serve.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "arena.cli", "serve", "--port", "0", "--http-port", "0",
             "--db", str(tmp_path / "arena.db"), "--any-token", "--house-wait", "0",
             "--rule", "max_hands=3", "--decision-ms", "3000"],
            stdout=subprocess.PIPE, stderr=log, start_new_session=True,
            preexec_fn=_few_descriptors)
        try:
            ports = served_ports(proc, log_path)
            yield ports[0], ports[1], log_path
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)


@contextlib.asynccontextmanager
async def idle_flood(port: int, count: int) -> AsyncIterator[list[asyncio.StreamWriter]]:
    """``count`` connections from FLOOD_FROM that never send a byte; all are
    closed on the way out. Connects the server never accepts give up."""
    writers: list[asyncio.StreamWriter] = []

    async def one() -> None:
        try:
            _, writer = await asyncio.wait_for(
                asyncio.open_connection("127.0.0.1", port, local_addr=(FLOOD_FROM, 0)), 5)
        except (OSError, TimeoutError):
            return
        writers.append(writer)

    try:
        for start in range(0, count, 50):  # in waves, so this process's own limit holds
            await asyncio.gather(*(one() for _ in range(start, min(count, start + 50))))
        yield writers
    finally:
        for writer in writers:
            writer.transport.abort()


def health(port: int) -> tuple[int, dict]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health", timeout=10) as r:
        return r.status, json.loads(r.read())


async def test_a_bot_plays_and_health_answers_while_the_web_port_is_flooded(served) -> None:
    bot_port, http_port, log_path = served
    if resource.getrlimit(resource.RLIMIT_NOFILE)[0] < FLOOD + 100:
        resource.setrlimit(resource.RLIMIT_NOFILE, (FLOOD + 200,) * 2)  # this process's own
    async with idle_flood(http_port, FLOOD) as flood:
        assert flood, "the flood connected nothing"
        status, body = await asyncio.to_thread(health, http_port)
        assert status == 200 and body["status"] == "ok"
        bot = await RawBot().connect(bot_port)
        welcome = await bot.hello("flooded-token", "flooded")
        assert welcome is not None and welcome["type"] == "welcome", welcome
        end = await bot.play_to_end(timeout=90)
        assert end["type"] == "match_end" and end["result"]
        await bot.close()
        status, _ = await asyncio.to_thread(health, http_port)
        assert status == 200
    log = log_path.read_text(errors="replace")
    assert log.count("Too many open files") <= 3, log[-3000:]
