"""A slot whose bots are connected to different nodes is played once the
node it needs tells its movable bots elsewhere to ``move`` there
(protocol §4): the SDK reconnects with the same token, and the tournament
ends without the organiser's help. A bot that is not movable is never
moved: its tournament waits and says where to connect it."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import aiohttp
import pytest

from protocol.sdk.client import BotClient

from .arenas import Bots, arena_nodes, create_tournament, until_finished

ADMIN = "admin-token-for-gathering"
CUP = {"name": "gather cup", "game": "muushig", "seed": 17, "duplicate": True,
       "limits": {"decision_ms": 1000, "bank_ms": 0}, "rules": {"max_hands": 2},
       "schedule": {"kind": "balanced", "tables": 1, "house_bot": "heuristic"},
       "entrant": [{"name": n, "remote": True} for n in ("north", "south")]}


def _client(port: int, name: str, reveals: list[str], **kw: Any) -> BotClient:
    rng = random.Random(name)
    return BotClient("127.0.0.1", port, f"token-{name}", name,
                     lambda phase, legal, state: rng.choice(legal),
                     on_reveal=lambda info, r: reveals.append(r.match),
                     reconnect=False, threaded=False, **kw)


@pytest.mark.timeout(180)
async def test_a_movable_bot_is_moved_to_the_node_its_slot_needs(pg_url) -> None:
    async with arena_nodes(pg_url, ("node-1", "node-2"), web=(0,), admin_token=ADMIN) as nodes:
        store = nodes.stores[0]
        reveals: dict[str, list[str]] = {"north": [], "south": []}
        north = _client(nodes.arenas[0].port, "north", reveals["north"])
        south = _client(nodes.arenas[1].port, "south", reveals["south"], follow_moves=True)
        bots = Bots.start([north, south])
        try:
            await create_tournament(nodes, "gather", CUP, ADMIN)
            await until_finished(store, "gather")
            played = sorted(s.match_id for s in store.get_schedule("gather"))
            async with asyncio.timeout(30):  # the reveals follow the last match_end
                while any(sorted(r) != played for r in reveals.values()):
                    await asyncio.sleep(0.1)
        finally:
            await bots.stop()
        # Gathered on node-1 (one bot each: the first node by name), moved once.
        assert south.moves == 1 and (south.host, south.port) == ("127.0.0.1",
                                                                 nodes.arenas[0].port)
        assert north.moves == 0
        assert {m.node for m in store.finished_matches(tournament_id="gather")} == {"node-1"}


@pytest.mark.timeout(120)
async def test_a_bot_that_did_not_say_movable_is_left_where_it_is(pg_url) -> None:
    async with arena_nodes(pg_url, ("node-1", "node-2"), web=(0,), admin_token=ADMIN) as nodes:
        store = nodes.stores[0]
        south = _client(nodes.arenas[1].port, "south", [])
        bots = Bots.start([_client(nodes.arenas[0].port, "north", []), south])
        try:
            await create_tournament(nodes, "stay", CUP, ADMIN)
            async with aiohttp.ClientSession() as http:
                async def waiting() -> dict[str, Any]:
                    async with http.get(f"{nodes.web(0)}/api/tournaments/stay") as r:
                        return (await r.json())["tournament"].get("waiting") or {}

                async with asyncio.timeout(30):
                    while (await waiting()).get("gather_on") != "node-1":
                        await asyncio.sleep(0.2)
                await asyncio.sleep(3)  # several polls of both nodes
                assert "connect south to node-1" in (await waiting())["reason"]
        finally:
            await bots.stop()
        assert south.moves == 0 and south.connections == 1  # never moved, never dropped
        assert all(s.match_id is None and s.attempts == 0 for s in store.get_schedule("stay"))
