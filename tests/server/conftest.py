from __future__ import annotations

from typing import Any, AsyncIterator, Awaitable, Callable

import pytest

from arena.server.config import ServerConfig
from arena.server.server import ArenaServer
from arena.storage.sqlite import SqliteStore

ServerFactory = Callable[..., Awaitable[ArenaServer]]


@pytest.fixture
async def make_server(tmp_path) -> AsyncIterator[ServerFactory]:
    """Start arena servers on free 127.0.0.1 ports; all are stopped after."""
    started: list[tuple[ArenaServer, SqliteStore]] = []

    async def factory(**overrides: Any) -> ArenaServer:
        values: dict[str, Any] = dict(host="127.0.0.1", port=0, http_port=None,
                                      db=str(tmp_path / f"arena{len(started)}.db"), open=True,
                                      house_wait_s=None, decision_ms=2000, bank_ms=0)
        values.update(overrides)
        config = ServerConfig(**values)
        store = SqliteStore(config.db)
        server = ArenaServer(config, store)
        await server.start()
        started.append((server, store))
        return server

    yield factory
    for server, store in reversed(started):
        await server.stop()
        store.close()
