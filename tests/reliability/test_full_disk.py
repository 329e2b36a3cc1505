"""A disk that fills and is freed again: the arena plays on afterwards.

``arena serve`` runs with its database (and the deal-key folder beside it)
on a small tmpfs of its own (a private mount namespace: ``unshare``), while
four bots play one match after another. The test fills the file system to
the last byte, waits while nothing can be stored, frees 2 MB, and expects
every bot to play whole matches again, without reconnecting, and the log
to say so in a few lines rather than one per attempt.

Seen before: after the disk filled and 2 MB were freed, no match started
again (10 bots waiting, 0 matches in 35 s): the ladder key's write raised
inside matchmaking and the lobby never tried again.

Skipped only where a tmpfs cannot be mounted (no ``unshare``, or user and
mount namespaces not allowed here).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Iterator

import pytest

from tests.reliability.serving import served_ports
from tests.server.rawbot import RawBot

SIZE = "16m"  # room for the store's first matches and their WAL before the ballast
_MOUNT = 'mount -t tmpfs -o size={size} tmpfs "$0" && exec "$@"'


def _can_mount(where: Path) -> str | None:
    """None if a private tmpfs can be mounted here, else why not."""
    if shutil.which("unshare") is None:
        return "no unshare command"
    probe = subprocess.run(["unshare", "-rm", "sh", "-c", _MOUNT.format(size="1m"), str(where),
                            "true"], capture_output=True, text=True, timeout=30)
    return None if probe.returncode == 0 else f"cannot mount a tmpfs: {probe.stderr.strip()}"


@pytest.fixture
def served_on_small_disk(tmp_path: Path) -> Iterator[tuple[int, int, Path, Path]]:
    disk = tmp_path / "disk"
    disk.mkdir()
    why_not = _can_mount(disk)
    if why_not:
        pytest.skip(why_not)
    log_path = tmp_path / "serve.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            ["unshare", "-rm", "sh", "-c", _MOUNT.format(size=SIZE), str(disk),
             sys.executable, "-m", "arena.cli", "serve", "--port", "0", "--http-port", "0",
             "--db", str(disk / "arena.db"), "--any-token", "--house-wait", "0",
             "--rule", "max_hands=2", "--decision-ms", "3000"],
            stdout=subprocess.PIPE, stderr=log, start_new_session=True)
        try:
            ports = served_ports(proc, log_path)
            # The server's own view of its tmpfs (after exec, proc.pid is the server).
            yield ports[0], ports[1], Path(f"/proc/{proc.pid}/root") / disk.relative_to("/"), \
                log_path
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)


class PlayingBot:
    """Plays one match after another on one connection; counts match_end."""

    def __init__(self, port: int, name: str) -> None:
        self.port, self.name = port, name
        self.ends: list[float] = []
        self.task: asyncio.Task[None] | None = None

    async def run(self) -> None:
        bot = await RawBot().connect(self.port)
        welcome = await bot.hello(f"{self.name}-token", self.name)
        assert welcome is not None and welcome["type"] == "welcome", welcome
        try:
            while True:
                await bot.until(lambda m: m["type"] == "match_start", timeout=3600)
                await bot.play_to_end(timeout=120)
                self.ends.append(time.monotonic())
        finally:
            await bot.close()


def fill(disk: Path) -> Path:
    """Write until the file system is full; the ballast file."""
    ballast = disk / "ballast"  # made while the disk had room (see the test)
    chunk = b"\0" * 65536
    with ballast.open("ab") as f:
        try:
            while True:
                f.write(chunk)
                f.flush()
        except OSError:
            pass
    with contextlib.suppress(OSError):  # the last partial pages too
        with ballast.open("ab") as f:
            while True:
                f.write(b"\0" * 512)
                f.flush()
    return ballast


def health_status(port: int) -> str:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health", timeout=10) as r:
            return json.loads(r.read())["status"]
    except urllib.error.HTTPError as exc:
        return json.loads(exc.read())["status"]


async def until(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout} s: {what}")
        await asyncio.sleep(0.1)


async def test_matches_start_again_after_a_full_disk_is_freed(served_on_small_disk) -> None:
    bot_port, http_port, disk, log_path = served_on_small_disk
    (disk / "ballast").touch()  # a full tmpfs may refuse even a new empty file
    bots = [PlayingBot(bot_port, f"steady{i}") for i in range(4)]
    tasks = [asyncio.create_task(b.run()) for b in bots]
    try:
        await until(lambda: all(b.ends for b in bots), 90, "a match each before the disk fills")

        ballast = fill(disk)
        assert ballast.stat().st_size > 4 * 1024 * 1024, "the store filled the disk first"
        assert shutil.disk_usage(disk).free < 65536
        # Whatever was running ends (aborted or finished); then nothing is stored.
        await asyncio.sleep(3)
        ended_while_full = [len(b.ends) for b in bots]
        # The lobby keeps trying; each try writes a little (a match's key) until
        # even the last half-used page is full and a plain file write fails too.
        with contextlib.suppress(AssertionError):
            await until(lambda: "No space left on device" in log_path.read_text(errors="replace"),
                        45, "a file write failed")
        await asyncio.sleep(2)
        assert [len(b.ends) for b in bots] == ended_while_full, "a match ended on a full disk"
        assert all(not t.done() for t in tasks), "a bot lost its connection"

        size = ballast.stat().st_size
        os.truncate(ballast, size - 2 * 1024 * 1024)  # 2 MB freed
        freed = time.monotonic()
        await until(lambda: all(len(b.ends) > n for b, n in zip(bots, ended_while_full)), 90,
                    "a whole match each after 2 MB were freed")
        assert all(not t.done() for t in tasks), "a bot lost its connection"
        await until(lambda: health_status(http_port) == "ok", 30, "health ok again")
        print(f"first match after freeing ended {min(b.ends[-1] for b in bots) - freed:.1f} s "
              "after the disk was freed")
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    log = log_path.read_text(errors="replace")
    assert log.count("table_start_failed") <= 5, log[-4000:]
    assert len(log) < 2_000_000, "the log grew like the disk filled it"
