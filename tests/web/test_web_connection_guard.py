"""The web port's door (arena.web.guard): connections capped per address and
in all, requests that must arrive in time, and caps kept below the
process's descriptor limit so the bot port always has some left.

Seen before: aiohttp kept every idle connection for as long as the visitor
liked and took any number of them; one address held every descriptor.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import resource
import subprocess
import sys
from pathlib import Path
from typing import AsyncIterator

import aiohttp
import structlog

from arena.app import Arena
from arena.descriptors import AcceptErrorThrottle
from arena.server.config import ServerConfig
from arena.storage.sqlite import SqliteStore
from arena.web.guard import RESERVED_DESCRIPTORS, WebConnectionLimits, web_connection_caps

from .conftest import ADMIN


@contextlib.asynccontextmanager
async def web_port(tmp_path: Path, limits: WebConnectionLimits) -> AsyncIterator[Arena]:
    store = SqliteStore(tmp_path / "arena.db")
    arena = Arena(ServerConfig(port=0, http_port=0, db=str(tmp_path / "arena.db"),
                               admin_token=ADMIN, house_wait_s=None), store)
    assert arena.web is not None
    arena.web.limits = limits
    await arena.start()
    try:
        yield arena
    finally:
        await arena.stop()
        store.close()


async def idle(port: int, source: str = "127.0.0.1") -> tuple[asyncio.StreamReader,
                                                              asyncio.StreamWriter]:
    return await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))


async def closed_by_server(reader: asyncio.StreamReader, timeout: float = 10.0) -> bytes:
    """Everything the server sent before it closed the connection."""
    async with asyncio.timeout(timeout):
        try:
            return await reader.read()
        except ConnectionError:
            return b""


async def get_health(port: int) -> int:
    async with aiohttp.ClientSession() as http:
        async with http.get(f"http://127.0.0.1:{port}/api/health",
                            timeout=aiohttp.ClientTimeout(total=10)) as response:
            return response.status


async def test_one_address_holds_at_most_its_share_and_others_are_still_served(tmp_path):
    limits = WebConnectionLimits(max_connections=12, per_address=3, request_timeout_s=30)
    async with web_port(tmp_path, limits) as arena:
        held = [await idle(arena.http_port, "127.0.0.2") for _ in range(3)]
        reader, writer = await idle(arena.http_port, "127.0.0.2")
        refused = await closed_by_server(reader)
        assert refused.startswith(b"HTTP/1.1 503") and b"per address" in refused
        writer.close()
        assert await get_health(arena.http_port) == 200  # another address
        assert arena.web.guard.open == 3
        for _, w in held:
            w.close()


async def test_all_addresses_together_hold_at_most_the_total(tmp_path):
    limits = WebConnectionLimits(max_connections=4, per_address=4, request_timeout_s=30)
    async with web_port(tmp_path, limits) as arena:
        held = [await idle(arena.http_port, f"127.0.0.{2 + i}") for i in range(4)]
        reader, writer = await idle(arena.http_port, "127.0.0.9")
        refused = await closed_by_server(reader)
        assert refused.startswith(b"HTTP/1.1 503") and b"limit of 4 connections" in refused
        writer.close()
        for _, w in held:
            w.close()
        async with asyncio.timeout(10):  # freed as soon as they are gone
            while arena.web.guard.open:
                await asyncio.sleep(0.02)
        assert await get_health(arena.http_port) == 200


async def test_a_connection_that_sends_no_request_is_cut_at_the_request_timeout(tmp_path):
    limits = WebConnectionLimits(request_timeout_s=0.5)
    async with web_port(tmp_path, limits) as arena:
        reader, writer = await idle(arena.http_port)
        assert await closed_by_server(reader) == b""
        assert arena.web.guard.timed_out == 1 and arena.web.guard.open == 0
        writer.close()


async def test_headers_trickled_byte_by_byte_are_cut_at_the_request_timeout(tmp_path):
    limits = WebConnectionLimits(request_timeout_s=0.5)
    async with web_port(tmp_path, limits) as arena:
        reader, writer = await idle(arena.http_port)
        request = b"GET /api/health HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 200
        with contextlib.suppress(ConnectionError):
            for byte in request:
                writer.write(bytes([byte]))
                await writer.drain()
                await asyncio.sleep(0.02)  # 200+ bytes: about 4 s, far past the deadline
                if reader.at_eof() or writer.is_closing():
                    break
        assert await closed_by_server(reader) == b""
        assert arena.web.guard.timed_out >= 1
        writer.close()


async def test_a_body_that_never_arrives_is_cut_and_a_whole_one_is_served(tmp_path):
    limits = WebConnectionLimits(request_timeout_s=0.5)
    async with web_port(tmp_path, limits) as arena:
        reader, writer = await idle(arena.http_port)
        writer.write(b"POST /api/bots HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Authorization: Bearer " + ADMIN.encode() + b"\r\n"
                     b"Content-Length: 100\r\n\r\n{\"name\":")
        assert await closed_by_server(reader) == b""
        writer.close()
        async with aiohttp.ClientSession() as http:
            async with http.post(f"http://127.0.0.1:{arena.http_port}/api/bots",
                                 json={"name": "whole"},
                                 headers={"Authorization": f"Bearer {ADMIN}"}) as response:
                assert response.status == 201


async def test_keep_alive_requests_on_one_connection_each_get_their_own_time(tmp_path):
    limits = WebConnectionLimits(request_timeout_s=0.5)
    async with web_port(tmp_path, limits) as arena:
        connector = aiohttp.TCPConnector(limit=1)
        async with aiohttp.ClientSession(connector=connector) as http:
            for _ in range(3):
                async with http.get(f"http://127.0.0.1:{arena.http_port}/api/health") as r:
                    assert r.status == 200
                    await r.read()
                await asyncio.sleep(0.3)  # 0.9 s in all on one connection: still served
        assert arena.web.guard.timed_out == 0


def test_the_caps_stay_below_the_descriptor_limit() -> None:
    limits = WebConnectionLimits(max_connections=1024, per_address=64)
    assert web_connection_caps(limits, 1 << 20) == (1024, 64)
    total, per_address = web_connection_caps(limits, 1024)
    assert total == (1024 - RESERVED_DESCRIPTORS) // 2 == 480
    assert per_address == 64
    total, per_address = web_connection_caps(limits, 256)
    assert (total, per_address) == (96, 24)  # one address never takes the whole web
    assert web_connection_caps(limits, resource.RLIM_INFINITY) == (1024, 64)


def test_serving_raises_the_soft_descriptor_limit_to_the_hard_one() -> None:
    script = ("import resource; resource.setrlimit(resource.RLIMIT_NOFILE, (256, 4096));"
              "from arena.descriptors import raise_open_files_limit;"
              "import json; print(json.dumps([raise_open_files_limit(),"
              " resource.getrlimit(resource.RLIMIT_NOFILE)]))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True, timeout=60).stdout
    assert json.loads(out) == [[256, 4096], [4096, 4096]]


def test_failed_accepts_are_logged_once_a_minute_with_their_count() -> None:
    loop = asyncio.new_event_loop()
    try:
        handler = AcceptErrorThrottle(every_s=60.0)
        context = {"message": "socket.accept() out of system resource",
                   "exception": OSError(errno.EMFILE, "Too many open files")}
        with structlog.testing.capture_logs() as logs:
            for _ in range(1000):
                handler(loop, dict(context))
        lines = [e for e in logs if e["event"] == "accept_failed"]
        assert len(lines) == 1 and "Too many open files" in lines[0]["cause"]
        assert handler.failures == 1000
    finally:
        loop.close()
