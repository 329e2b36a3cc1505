"""A live arena (bot port and web, on free 127.0.0.1 ports) for each
hostile scenario, with limits small enough to reach in a test."""

from __future__ import annotations

from typing import Any, AsyncIterator, Awaitable, Callable

import pytest

from arena.app import Arena
from arena.server.config import ServerConfig
from arena.server.server import ArenaServer
from arena.storage.sqlite import SqliteStore

# Small limits: a test reaches each in well under a second.
LIMITS: dict[str, Any] = dict(
    max_connections=120, max_connections_per_address=40, max_connections_per_token=4,
    hello_timeout_s=1.0, idle_timeout_s=1.0, auth_failures_per_minute=5,
    rate_limit_per_s=50.0, rate_limit_burst=100, rate_limit_strikes=10, close_linger_s=0.5)


@pytest.fixture
async def arena(tmp_path) -> AsyncIterator[Callable[..., Awaitable[ArenaServer]]]:
    started: list[tuple[ArenaServer, SqliteStore]] = []

    async def factory(**overrides: Any) -> ArenaServer:
        values: dict[str, Any] = dict(host="127.0.0.1", port=0, http_port=0, open=True,
                                      db=str(tmp_path / f"arena{len(started)}.db"),
                                      house_wait_s=0.0, decision_ms=300, bank_ms=0, **LIMITS)
        values.update(overrides)
        config = ServerConfig(**values)
        store = SqliteStore(config.db)
        server = Arena(config, store).server  # with the web app when http_port is set
        await server.start()
        started.append((server, store))
        return server

    yield factory
    for server, store in reversed(started):
        await server.stop()
        store.close()
