"""``arena serve --workers 2`` on PostgreSQL as a named node: the workers
store under their own node names, and the parent relays their live matches
to the other nodes over NOTIFY."""

from __future__ import annotations

import pytest

from arena.live_bridge import BridgedHub, LiveBridge
from arena.storage import open_store

from .served import ARGS, Bots, tokens_for, until


@pytest.mark.timeout(120)
async def test_other_nodes_see_the_workers_live_matches(served, pg_url):
    arena = served(*ARGS, db=pg_url, node="node-1")
    observer_hub = BridgedHub()
    observer = LiveBridge(observer_hub, pg_url, "node-2", flush_s=0.05)
    await observer.start()
    bots = Bots(arena.port, tokens_for(0, 5, prefix="pg") + tokens_for(1, 5, prefix="pg"),
                delay_s=0.05)
    try:
        def both_heard():
            return len(observer_hub.live_matches()) >= 2 and all(
                m["events"] > 0 for m in observer_hub.live_matches())

        await until(both_heard, what="the workers' matches heard on another node")
        assert {m["node"] for m in observer_hub.live_matches()} == {"node-1"}
        live_ids = {m["id"] for m in observer_hub.live_matches()}
        store = open_store(pg_url)
        try:
            assert {store.get_match(m).node for m in live_ids} == {"node-1-w1", "node-1-w2"}
        finally:
            store.close()
    finally:
        await bots.stop()
        await observer.stop()
    assert arena.stop() == 0
