"""Health, /metrics and the match API name the node that answers (and the
node that played each match): behind a load balancer over several nodes,
an operator must know which one spoke."""

from __future__ import annotations

from aiohttp.test_utils import TestClient, TestServer

from arena.metrics import Metrics
from arena.live import LiveHub
from arena.storage.sqlite import SqliteStore
from arena.web.app import make_app
from tests.storage.helpers import finish_kwargs, match


async def test_metrics_and_the_match_api_name_the_node(tmp_path):
    store = SqliteStore(tmp_path / "arena.db", node="node-7")
    try:
        store.create_match(match("m1"))  # stamped with this store's node
        store.finish_match("m1", **finish_kwargs())
        app = make_app(store, hub=LiveHub(), metrics=Metrics())
        async with TestClient(TestServer(app)) as client:
            text = await (await client.get("/metrics")).text()
            assert 'arena_node_info{node="node-7"} 1' in text.splitlines()
            body = await (await client.get("/api/matches/m1")).json()
            assert body["match"]["node"] == "node-7"
            listed = await (await client.get("/api/matches")).json()
            assert [m["node"] for m in listed["matches"]] == ["node-7"]
            health = await (await client.get("/api/health")).json()
            assert health["store"]["node"] == "node-7"
    finally:
        store.close()


async def test_an_unnamed_node_says_it_has_no_name(tmp_path):
    store = SqliteStore(tmp_path / "arena.db")
    try:
        app = make_app(store, hub=LiveHub(), metrics=Metrics())
        async with TestClient(TestServer(app)) as client:
            text = await (await client.get("/metrics")).text()
            assert 'arena_node_info{node=""} 1' in text.splitlines()
    finally:
        store.close()
