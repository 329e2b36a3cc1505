"""A stopped arena's web app lets go of its server.

Seen before: every arena a test process started and stopped stayed in
memory, with its server, store, writer and everything they held, because
aiohttp keeps a module-level cache of each route's middleware chain keyed
by the route's handler and the apps serving it: a request was enough to
put the app in it, and nothing took it out.
"""

from __future__ import annotations

import gc
import weakref

import aiohttp

from arena.app import Arena
from arena.server.config import ServerConfig
from arena.storage.sqlite import SqliteStore


async def test_a_stopped_arena_is_freed_after_serving_requests(tmp_path):
    store = SqliteStore(str(tmp_path / "arena.db"))
    arena = Arena(ServerConfig(port=0, http_port=0, db=str(tmp_path / "arena.db"),
                               house_wait_s=None), store)
    await arena.start()
    async with aiohttp.ClientSession() as http:
        for path in ("/api/health", "/", "/api/nothing"):
            async with http.get(f"http://127.0.0.1:{arena.http_port}{path}") as response:
                await response.read()
    await arena.stop()
    store.close()
    freed = [weakref.ref(arena), weakref.ref(arena.server), weakref.ref(arena.server.writer)]
    del arena
    gc.collect()
    assert [ref() for ref in freed] == [None, None, None]
