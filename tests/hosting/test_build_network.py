"""A build never reaches the host's network: not its loopback, not its LAN."""

from __future__ import annotations

import asyncio
import io
import json
import shutil
import tarfile

import pytest

from arena.hosting.builder import submit_and_build
from arena.hosting.versions import BuildStatus
from tests.hosting.conftest import SAYS_HELLO, Arena, needs_sandbox

pytestmark = needs_sandbox


def tar_of(files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


class Listener:
    """A port on the host's loopback that counts who reached it."""

    def __init__(self) -> None:
        self.reached = 0

    async def __aenter__(self) -> "Listener":
        self.server = await asyncio.start_server(self._seen, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    async def _seen(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reached += 1
        writer.close()

    async def __aexit__(self, *exc: object) -> None:
        self.server.close()


async def test_a_node_lifecycle_script_cannot_reach_the_hosts_loopback(arena: Arena) -> None:
    if shutil.which("node") is None:
        pytest.skip("Node.js is not installed")
    async with Listener() as listener:
        probe = (f"require('net').connect({listener.port}, '127.0.0.1')"
                 ".on('connect', () => process.exit(0)).on('error', () => process.exit(0))")
        package = {"name": "evil", "version": "1.0.0", "scripts": {"preinstall": f"node -e \"{probe}\""},
                   "dependencies": {"left-pad": "1.3.0"}}
        data = tar_of({"package.json": json.dumps(package), "bot.js": "setInterval(()=>{}, 1000)\n"})
        version = await submit_and_build(arena.versions, "npm-evil", data, "bot.tar.gz")
        await asyncio.sleep(0.2)
    assert listener.reached == 0
    assert version.status is BuildStatus.FAILED
    assert "node_modules" in (version.reason or "")


async def test_a_build_command_cannot_reach_the_hosts_loopback(arena: Arena) -> None:
    async with Listener() as listener:
        script = (f"import socket\ntry:\n    socket.create_connection(('127.0.0.1', {listener.port}), 2)"
                  "\n    print('reached')\nexcept OSError as e:\n    print('refused', e)\n")
        manifest = 'lang = "command"\nbuild = "python3 probe.py"\nrun = "python3 hello.py"\n'
        data = tar_of({"arena-bot.toml": manifest, "probe.py": script,
                       "hello.py": SAYS_HELLO + "import time\ntime.sleep(60)\n"})
        version = await submit_and_build(arena.versions, "cmd-evil", data, "bot.tar.gz")
    assert listener.reached == 0
    assert version.status is BuildStatus.READY
    assert "refused" in arena.versions.build_log("cmd-evil", 1)

