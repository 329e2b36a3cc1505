"""/api/health reports a store it cannot read (503 with the cause), on both
backends, even when the node wrote nothing during the outage; and it names
the node."""

from __future__ import annotations

import contextlib

from aiohttp.test_utils import TestClient, TestServer

from arena.live import LiveHub
from arena.metrics import Metrics
from arena.storage import open_store
from arena.storage.base import StorageError
from arena.web.app import make_app
from tests.storage.conftest import db_location  # noqa: F401 - fixtures


async def test_health_reports_a_store_outage_with_its_cause_and_names_the_node(
        db_location, monkeypatch):
    store = open_store(db_location, node="node-7")
    client = TestClient(TestServer(make_app(store, hub=LiveHub(), metrics=Metrics())))
    await client.start_server()
    try:
        response = await client.get("/api/health")
        body = await response.json()
        assert response.status == 200 and body["store"]["node"] == "node-7"

        @contextlib.contextmanager
        def unreachable():
            raise StorageError("database db:5432/arena: connection refused")
            yield  # pragma: no cover

        monkeypatch.setattr(store.db, "read", unreachable)
        response = await client.get("/api/health")
        body = await response.json()
        assert response.status == 503 and body["status"] == "store_failing"
        assert "connection refused" in body["store"]["last_error"]
        assert body["store"]["node"] == "node-7"
    finally:
        await client.close()
        monkeypatch.undo()
        store.close()
