"""The live bridge: a node's public live messages reach the hubs of the
other nodes through PostgreSQL's LISTEN/NOTIFY, and only those."""

from __future__ import annotations

import asyncio
import json

from arena.live_bridge import BridgedHub, LiveBridge, bundles
from arena.storage.notify import MAX_PAYLOAD_BYTES


def test_bundles_fit_one_notification_and_keep_the_order():
    events = [json.dumps({"kind": "play", "card": f"{i:04d}" + "x" * 40}) for i in range(400)]
    messages = [{"t": "start", "m": "m1", "info": {}}, {"t": "ev", "m": "m1", "j": events},
                {"t": "end", "m": "m1", "s": {}}]
    out = bundles("node-1", messages)
    assert len(out) > 1
    assert all(len(json.dumps(b, separators=(",", ":")).encode()) <= MAX_PAYLOAD_BYTES
               for b in out)
    flat = [m for b in out for m in b["msgs"]]
    assert flat[0]["t"] == "start" and flat[-1]["t"] == "end"
    assert [e for m in flat if m["t"] == "ev" for e in m["j"]] == events
    assert {b["n"] for b in out} == {"node-1"}


def test_an_event_too_big_for_any_notification_is_left_out():
    huge = json.dumps({"kind": "note", "text": "x" * (MAX_PAYLOAD_BYTES + 10)})
    small = json.dumps({"kind": "small"})
    out = bundles("n", [{"t": "ev", "m": "m1", "j": [huge, small]}])
    assert [m["j"] for b in out for m in b["msgs"]] == [[small]]


def test_an_event_is_sent_as_it_was_when_published():
    hub = BridgedHub()
    hub.match_started("m1", {})
    event = {"kind": "play", "card": "AS"}
    hub.match_events("m1", [(event, None)])
    event["card"] = "KD"  # the table reuses its objects for the next step
    assert json.loads(hub.outbox[-1]["j"][0]) == {"kind": "play", "card": "AS"}


def test_own_messages_go_out_and_remote_ones_do_not():
    hub = BridgedHub()
    hub.match_started("m1", {"players": ["a"]})
    hub.match_events("m1", [({"kind": "deal"}, None)])
    assert [m["t"] for m in hub.outbox] == ["start", "ev"]
    assert json.loads(hub.outbox[1]["j"][0]) == {"kind": "deal"}
    hub.outbox.clear()
    hub.apply_remote("node-2", {"t": "start", "m": "m2", "info": {"players": ["b"]}})
    hub.apply_remote("node-2", {"t": "ev", "m": "m2", "j": ['{"kind":"deal"}']})
    assert hub.outbox == []
    live = {m["id"]: m for m in hub.live_matches()}
    assert live["m2"]["node"] == "node-2" and live["m2"]["events"] == 1
    assert hub.public_log("m2") == [{"seq": 0, "at": hub.public_log("m2")[0]["at"],
                                     "data": {"kind": "deal"}}]


def test_a_match_joined_mid_way_is_shown_from_its_next_event():
    hub = BridgedHub()
    hub.apply_remote("node-2", {"t": "ev", "m": "m9", "j": ['{"kind":"play"}']})
    assert [m["id"] for m in hub.live_matches()] == ["m9"]
    hub.apply_remote("node-2", {"t": "end", "m": "m9", "s": {"result": {}}})
    assert hub.live_matches() == []


def test_the_matches_of_a_silent_node_are_ended():
    hub = BridgedHub()
    hub.apply_remote("node-2", {"t": "start", "m": "m1", "info": {}})
    hub.apply_remote("node-3", {"t": "start", "m": "m2", "info": {}})
    assert hub.end_matches_of("node-2", "node node-2 stopped") == ["m1"]
    assert [m["id"] for m in hub.live_matches()] == ["m2"]


async def _until(condition, timeout_s: float = 10.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while not condition():
        assert loop.time() < deadline, "not heard in time"
        await asyncio.sleep(0.02)


async def test_two_nodes_see_each_others_live_matches(pg_url):
    hub_a, hub_b = BridgedHub(), BridgedHub()
    a = LiveBridge(hub_a, pg_url, "node-a", channel="arena_live_test", flush_s=0.02)
    b = LiveBridge(hub_b, pg_url, "node-b", channel="arena_live_test", flush_s=0.02,
                   beat_s=0.1, stale_s=0.5)
    await a.start()
    await b.start()
    try:
        hub_a.match_started("ma", {"players": ["x", "y"], "tournament_id": "t1"})
        hub_a.match_events("ma", [({"kind": "deal", "round": 1}, None),
                                  ({"kind": "play", "card": "AS"}, None)])
        await _until(lambda: hub_b.is_live("ma") and len(hub_b.public_log("ma")) == 2)
        assert hub_b.live_info("ma")["node"] == "node-a"
        assert [e["data"] for e in hub_b.public_log("ma")] == [
            {"kind": "deal", "round": 1}, {"kind": "play", "card": "AS"}]
        assert not hub_a.remote_matches  # a node does not hear itself
        async with hub_b.subscribe("standings:t1") as sub:
            hub_a.match_ended("ma", {"result": {"stars": [1, 0]}})
            hub_a.standings_changed("t1")
            message = await asyncio.wait_for(sub.__anext__(), timeout=10)
        assert message == {"type": "standings_changed", "scope": "t1"}
        assert not hub_b.is_live("ma")
        # A node that stops talking (killed) has its live matches ended.
        hub_a.match_started("mb", {})
        await _until(lambda: hub_b.is_live("mb"))
        await a.stop()
        await _until(lambda: not hub_b.is_live("mb"), timeout_s=5)
        assert hub_b.live_info("mb")["ended"]
    finally:
        await a.stop()
        await b.stop()
