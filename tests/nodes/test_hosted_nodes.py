"""Two ``arena serve --hosted`` nodes on one PostgreSQL database share
hosted bots: uploads to both at once get v1 and v2, each node lists and
serves both, a version is built once, and neither node writes versions into
the folder it was started in."""

from __future__ import annotations

import asyncio
import json
import os
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from arena.auth import hash_token
from arena.storage import open_store
from tests.hosting.conftest import needs_sandbox

from .nodes import ROOT

pytestmark = needs_sandbox
BOT = (ROOT / "sample_bots" / "python_random" / "bot.py").read_bytes()
_READY = re.compile(r"web on http://[\d.]+:(\d+)/")


class ServeNode:
    def __init__(self, url: str, name: str, folder: Path) -> None:
        folder.mkdir()
        self.folder = folder
        self.log_path = folder.parent / f"{name}.log"
        env = dict(os.environ, PYTHONPATH=str(ROOT), ARENA_NODE=name,
                   XDG_CACHE_HOME=str(folder.parent / f"{name}-cache"))
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "arena.cli", "serve", "--hosted", "--db", url,
                 "--port", "0", "--http-port", "0", "--admin-token", "admin",
                 "--ladder-interval", "3600"],
                stdout=subprocess.PIPE, stderr=log, stdin=subprocess.DEVNULL, env=env,
                cwd=folder, start_new_session=True)
        self.base = f"http://127.0.0.1:{self._web_port(60)}"

    def _web_port(self, timeout_s: float) -> int:
        assert self.proc.stdout is not None
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and self.proc.poll() is None:
            if select.select([self.proc.stdout], [], [], 0.2)[0]:
                found = _READY.search(self.proc.stdout.readline().decode())
                if found:
                    return int(found.group(1))
        self.stop()
        raise AssertionError(f"arena serve did not start:\n{self.log_path.read_text()[-3000:]}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


async def _upload(http: aiohttp.ClientSession, node: ServeNode, name: str) -> dict[str, Any]:
    form = aiohttp.FormData()
    form.add_field("file", BOT, filename=name)
    async with http.post(f"{node.base}/api/bots/alpha/versions", data=form,
                         headers={"Authorization": "Bearer alpha-token"}) as response:
        assert response.status == 202, await response.text()
        return (await response.json())["version"]


async def _versions(http: aiohttp.ClientSession, node: ServeNode) -> list[dict[str, Any]]:
    async with http.get(f"{node.base}/api/bots/alpha/versions",
                        headers={"Authorization": "Bearer alpha-token"}) as response:
        return (await response.json())["versions"]


@pytest.mark.timeout(240)
async def test_two_serving_nodes_share_versions_numbered_once(pg_url: str, tmp_path: Path
                                                            ) -> None:
    store = open_store(pg_url)
    store.add_bot("alpha", hash_token("alpha-token"))
    store.close()
    nodes = [ServeNode(pg_url, "node-a", tmp_path / "a"), ServeNode(pg_url, "node-b",
                                                                     tmp_path / "b")]
    try:
        async with aiohttp.ClientSession() as http:
            sent = await asyncio.gather(_upload(http, nodes[0], "from-a.py"),
                                        _upload(http, nodes[1], "from-b.py"))
            assert sorted(v["version"] for v in sent) == [1, 2]
            deadline = time.monotonic() + 180
            while True:  # both built (by whichever node claimed each), seen by both
                seen = [await _versions(http, node) for node in nodes]
                if all([v["status"] for v in s] == ["ready", "ready"] for s in seen):
                    break
                assert time.monotonic() < deadline, seen
                await asyncio.sleep(0.5)
            assert seen[0] == seen[1]
            assert {v["build_seconds"] is not None for v in seen[0]} == {True}
            for node in nodes:  # each build log is read from either node
                async with http.get(f"{node.base}/api/bots/alpha/versions/2/log",
                                    headers={"Authorization": "Bearer alpha-token"}) as got:
                    assert got.status == 200 and b"compileall" in await got.read()
    finally:
        for node in nodes:
            node.stop()
    for node in nodes:
        assert os.listdir(node.folder) == []  # nothing written where it was started
    builds = [json.loads(line) for node in nodes
              for line in node.log_path.read_text(errors="replace").splitlines()
              if line.startswith("{") and '"build_finished"' in line]
    assert sorted(b["version"] for b in builds) == [1, 2], builds  # each built once
