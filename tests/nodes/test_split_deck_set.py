"""A Swiss round whose one table has its bots on different nodes: the other
table is played, the round's deck set stays sealed (no reveal, the API
embargoed), the tournament says which slot waits for which bots on which
nodes, and nobody claims that slot. Once the split pair meets on one node
the round is played out and every bot, on either node, is sent the reveal
of each match it played."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import aiohttp
import pytest

from protocol.sdk.client import BotClient

from .arenas import Bots, arena_nodes, create_and_pair, until_finished

ADMIN = "admin-token-for-split-sets"
CUP = {"name": "split set", "game": "muushig", "seed": 13, "duplicate": True,
       "limits": {"decision_ms": 1000, "bank_ms": 0},
       "rules": {"players": 2, "max_hands": 2},
       "schedule": {"kind": "swiss", "rounds": 1, "house_bot": "heuristic"},
       "entrant": [{"name": n, "remote": True} for n in ("ann", "bob", "cat", "dan")]}


def _client(port: int, name: str, reveals: dict[str, list[str]]) -> BotClient:
    rng = random.Random(name)
    return BotClient("127.0.0.1", port, f"token-{name}", name,
                     lambda phase, legal, state: rng.choice(legal),
                     on_reveal=lambda info, r: reveals[name].append(r.match),
                     reconnect=False, threaded=False)


@pytest.mark.timeout(200)
async def test_a_split_table_holds_its_deck_set_sealed_says_why_and_plays_once_joined(pg_url):
    async with arena_nodes(pg_url, ("node-a", "node-b"), web=(0,), admin_token=ADMIN) as nodes:
        store, ports = nodes.stores[0], [a.port for a in nodes.arenas]
        async with aiohttp.ClientSession() as http:
            async def tournament() -> dict[str, Any]:
                async with http.get(f"{nodes.web(0)}/api/tournaments/split-set") as r:
                    assert r.status == 200
                    return (await r.json())["tournament"]

            schedule = await create_and_pair(nodes, "split-set", CUP, ADMIN)
            split, whole = sorted({tuple(sorted(s.players)) for s in schedule})
            reveals: dict[str, list[str]] = {n: [] for n in split + whole}
            # The whole table's bots on node B; the split table's one on each node.
            bots = Bots.start([_client(ports[1], n, reveals) for n in whole]
                              + [_client(ports[0], split[0], reveals),
                                 _client(ports[1], split[1], reveals)])
            moved: Bots | None = None
            try:
                async with asyncio.timeout(120):  # the whole table is played
                    while sum(1 for s in store.get_schedule("split-set")
                              if s.match_id is not None) < 2:
                        await asyncio.sleep(0.1)
                async def placed() -> bool:  # each node has written where its bots are
                    entrants = ((await tournament()).get("waiting") or {}).get("entrants")
                    return bool(entrants) and all(e["connected_to"] for e in entrants)

                async with asyncio.timeout(30):  # and the tournament says what it waits for
                    while not await placed():
                        await asyncio.sleep(0.2)
                state = await tournament()
                waiting = state["waiting"]
                first_split = min(s.slot for s in schedule if tuple(sorted(s.players)) == split)
                assert waiting["slot"] == first_split and waiting["open_slots"] == 2
                assert {e["name"]: e["connected_to"] for e in waiting["entrants"]} == {
                    split[0]: ["node-a"], split[1]: ["node-b"]}
                assert "different nodes" in waiting["reason"]
                # Where to gather them: one each, so the first node by name.
                assert waiting["gather_on"] == "node-a"
                assert f"connect {split[1]} to node-a" in waiting["reason"]
                assert state["status"] == "running"
                await asyncio.sleep(3)  # several polls of both nodes
                now = store.get_schedule("split-set")
                assert all(s.attempts == 0 for s in now if s.match_id is None)  # no claim churn
                # The played table stays sealed: no reveal sent, the API embargoed.
                assert all(r == [] for r in reveals.values())
                played = [s.match_id for s in now if s.match_id is not None]
                for match_id in played:
                    async with http.get(f"{nodes.web(0)}/api/matches/{match_id}") as r:
                        body = await r.json()
                        assert body["embargoed"] is True
                        assert body["match"]["reveal"] is None
                # The split pair meets on node A: the round is played out.
                stays = bots.bots[3]
                await stays.stop()
                moved = Bots.start([_client(ports[0], split[1], reveals)])
                await until_finished(store, "split-set")
                final = store.get_schedule("split-set")
                owed = {n: sorted(s.match_id for s in final if n in s.players) for n in reveals}
                async with asyncio.timeout(30):
                    while {n: sorted(r) for n, r in reveals.items()} != owed:
                        await asyncio.sleep(0.1)
            finally:
                await bots.stop()
                if moved is not None:
                    await moved.stop()
        nodes_played = {m.node for m in store.finished_matches(tournament_id="split-set")}
        assert nodes_played == {"node-a", "node-b"}
