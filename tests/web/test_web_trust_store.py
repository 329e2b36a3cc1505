"""A failing store (disk full, read-only) as the web sees it.

Before: ``POST /api/bots`` answered 500 with a traceback in the log and the
health endpoint said ``ok``. Now writes answer 503 with a message a user can
act on, health reports the store as failing until a write works again, and
the server still shuts down cleanly.
"""

from __future__ import annotations

from pathlib import Path

import aiohttp
import structlog
from aiohttp.test_utils import TestClient, TestServer

from arena.metrics import Metrics
from arena.app import Arena, http_port_of
from arena.server.config import ServerConfig
from arena.storage.sqlite import SqliteStore
from arena.web.app import make_app
from arena.live import LiveHub

from .conftest import ADMIN

ADMIN_HEADERS = {"Authorization": f"Bearer {ADMIN}"}


def fail_writes(store: SqliteStore, failing: bool = True) -> None:
    # SQLite then refuses every write with "attempt to write a readonly
    # database", as it does on a read-only file system.
    store._write.execute(f"PRAGMA query_only = {int(failing)}")


async def test_a_write_to_a_failing_store_is_503_and_health_says_so(store: SqliteStore) -> None:
    app = make_app(store, hub=LiveHub(), metrics=Metrics(), admin_token=ADMIN)
    async with TestClient(TestServer(app)) as c:
        fail_writes(store)
        with structlog.testing.capture_logs() as logs:
            response = await c.post("/api/bots", json={"name": "late"}, headers=ADMIN_HEADERS)
        assert response.status == 503
        assert response.headers["Retry-After"]
        error = (await response.json())["error"]
        assert error["status"] == 503 and "storage" in error["message"]
        assert str(store.path) not in error["message"]  # no internal paths for visitors
        assert not [e for e in logs if e["event"] == "web_handler_failed"]
        assert [e["event"] for e in logs if e["log_level"] == "error"] == ["web_store_failing"]

        health = await c.get("/api/health")
        assert health.status == 503
        body = await health.json()
        assert body["status"] == "store_failing"
        assert body["store"]["healthy"] is False and body["store"]["last_error"]

        # Reads still work while writes fail.
        assert (await c.get("/api/bots")).status == 200

        fail_writes(store, False)
        again = await c.post("/api/bots", json={"name": "late"}, headers=ADMIN_HEADERS)
        assert again.status == 201
        health = await c.get("/api/health")
        assert health.status == 200
        assert (await health.json())["store"] == {"healthy": True, "last_error": None,
                                                 "node": None}


async def test_token_rotation_and_tournaments_on_a_failing_store_are_503(
        store: SqliteStore) -> None:
    app = make_app(store, hub=LiveHub(), metrics=Metrics(), admin_token=ADMIN)
    async with TestClient(TestServer(app)) as c:
        assert (await c.post("/api/bots", json={"name": "rot"}, headers=ADMIN_HEADERS)
                ).status == 201
        fail_writes(store)
        assert (await c.post("/api/bots/rot/token", headers=ADMIN_HEADERS)).status == 503
        assert (await c.delete("/api/bots/rot", headers=ADMIN_HEADERS)).status == 503
        doc = {"name": "Cup", "entrant": [{"name": "rot", "remote": True}]}
        assert (await c.post("/api/tournaments", json=doc, headers=ADMIN_HEADERS)
                ).status == 503


async def test_the_server_stops_cleanly_after_store_failures(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "arena.db")
    config = ServerConfig(port=0, http_port=0, db=str(tmp_path / "arena.db"),
                          admin_token=ADMIN, house_wait_s=None)
    arena = Arena(config, store)
    server = arena.server
    await arena.start()
    try:
        fail_writes(store)
        base = f"http://127.0.0.1:{http_port_of(server)}"
        async with aiohttp.ClientSession() as http:
            async with http.post(f"{base}/api/bots", json={"name": "x"},
                                 headers=ADMIN_HEADERS) as response:
                assert response.status == 503
            async with http.get(f"{base}/api/health") as response:
                assert (await response.json())["store"]["healthy"] is False
        with structlog.testing.capture_logs() as logs:
            await server.stop()
        assert not [e for e in logs if e.get("exc_info") or e["log_level"] == "critical"]
    finally:
        await server.stop()
        fail_writes(store, False)
        store.close()
