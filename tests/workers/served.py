"""``arena serve --workers N`` as a real process for the worker tests: its
ports read from its first line, its health and live matches over HTTP, and
a stop that always happens (SIGTERM, then SIGKILL of its process group)."""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
import select
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from arena.server.workers.dispatch import route_key, worker_for_key
from protocol.sdk.client import BotClient

# Short matches (3 hands), a lone bot waits little for house bots.
ARGS = ("--any-token", "--house-wait", "0.3", "--rule", "max_hands=3")

_READY = re.compile(r"bots connect to [\d.]+:(\d+), web on http://[\d.]+:(\d+)/")


def tokens_for(position: int, count: int, workers: int = 2, prefix: str = "tok") -> list[str]:
    """``count`` tokens whose bots (named ``b-TOKEN``, open names: routed by
    name) go to the worker at ``position``."""
    out: list[str] = []
    i = 0
    while len(out) < count:
        token = f"{prefix}-{i}"
        if worker_for_key(route_key({"token": token, "name": f"b-{token}"}, True),
                          workers) == position:
            out.append(token)
        i += 1
    return out


def random_strategy(seed: int, delay_s: float = 0.0):
    rng = random.Random(seed)
    if not delay_s:
        return lambda phase, legal, state: rng.choice(legal)

    async def slow(phase, legal, state):
        await asyncio.sleep(delay_s)
        return rng.choice(legal)
    return slow


def process_alive(pid: int) -> bool:
    """Running (a zombie waiting to be reaped is not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state not in ("Z", "X")


class Served:
    def __init__(self, db: Path | str, *args: str, workers: int = 2, node: str | None = None,
                 log_path: Path | None = None) -> None:
        self.db = db
        self.node = node
        self.log_path = log_path or Path(db).with_suffix(".log")
        self._log = self.log_path.open("wb")
        env = {k: v for k, v in os.environ.items() if k != "ARENA_NODE"}
        if node is not None:
            env["ARENA_NODE"] = node
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "arena.cli", "serve", "--workers", str(workers),
             "--port", "0", "--http-port", "0", "--db", str(db), *args],
            stdout=subprocess.PIPE, stderr=self._log, start_new_session=True, env=env)
        self.port, self.http_port = self._wait_ready(timeout_s=60)

    def _wait_ready(self, timeout_s: float) -> tuple[int, int]:
        assert self.proc.stdout is not None
        deadline = time.monotonic() + timeout_s
        line = b""
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.proc.stdout], [], [], 0.2)
            if ready:
                line = self.proc.stdout.readline()
                match = _READY.search(line.decode())
                if match:
                    return int(match.group(1)), int(match.group(2))
            if self.proc.poll() is not None:
                break
        self.kill()
        raise AssertionError(f"arena serve did not start: {line!r}\n{self.log_tail()}")

    def worker_node(self, index: int) -> str:
        """The node name of worker ``index``: an unnamed server's workers are
        named after its process id."""
        base = self.node if self.node is not None else f"arena-{self.proc.pid}"
        return f"{base}-w{index}"

    def log_tail(self, lines: int = 30) -> str:
        self._log.flush()
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def get(self, path: str) -> Any:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.http_port}{path}", timeout=5) as r:
            return json.loads(r.read())

    def health(self) -> dict[str, Any]:
        return self.get("/api/health")

    def workers(self) -> list[dict[str, Any]]:
        return self.health()["metrics"]["workers"]

    def live(self) -> list[dict[str, Any]]:
        return self.get("/api/matches/live")["matches"]

    def stop(self, timeout_s: float = 30) -> int:
        """SIGTERM and wait: the parent's exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                self.kill()
        self._log.close()
        return self.proc.returncode

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait(timeout=10)


class Bots:
    """SDK bots in this test's loop; what each saw end."""

    def __init__(self, port: int, tokens: list[str], *, delay_s: float = 0.0,
                 max_matches: int | None = None, names: list[str] | None = None,
                 reconnect: bool = False) -> None:
        self.port = port
        self.reconnect = reconnect
        self.delay_s = delay_s
        self.max_matches = max_matches
        self.results: dict[str, dict] = {}  # match id -> result, as the bots were told
        self.clients: list[BotClient] = []
        self.tasks: list[asyncio.Task] = []
        for i, token in enumerate(tokens):
            self.add(token, names[i] if names else f"b-{token}")

    def add(self, token: str, name: str) -> None:
        client = BotClient("127.0.0.1", self.port, token, name,
                           random_strategy(len(self.clients), self.delay_s),
                           reconnect=self.reconnect,
                           threaded=False, max_matches=self.max_matches,
                           on_match_end=self._ended)
        self.clients.append(client)
        self.tasks.append(asyncio.create_task(client.run()))

    def _ended(self, info, message) -> None:
        self.results[message.match] = message.result

    async def finish(self, timeout_s: float) -> None:
        await asyncio.wait_for(asyncio.gather(*self.tasks), timeout=timeout_s)

    async def stop(self) -> None:
        for client in self.clients:
            await client.stop()
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)


async def until(condition, timeout_s: float = 30.0, what: str = "condition"):
    deadline = time.monotonic() + timeout_s
    while True:
        value = await asyncio.to_thread(condition)
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.1)
