"""An HTTP tournament whose remote entrants are connected to different
nodes cannot be played (a match needs all its bots on one node). It must
say so, wait without churning claims, never hold up another tournament,
and the admin can cancel it over HTTP."""

from __future__ import annotations

import asyncio

import aiohttp
import pytest

from arena.storage.base import TournamentStatus
from protocol.deals import key_commitment

from .arenas import Bots, Nodes, arena_nodes, random_bot

ADMIN = "admin-token-for-split"


def _cup(name: str, seed: int, entrants: tuple[str, str]) -> dict:
    return {"name": name, "game": "muushig", "seed": seed, "duplicate": True,
            "limits": {"decision_ms": 1000, "bank_ms": 0},
            "schedule": {"kind": "balanced", "tables": 1, "house_bot": "heuristic"},
            "entrant": [{"name": n, "remote": True} for n in entrants]}


async def _wait_for(condition, timeout: float, what: str):
    async with asyncio.timeout(timeout):
        while True:
            value = await condition()
            if value:
                return value
            await asyncio.sleep(0.1)


@pytest.mark.timeout(150)
async def test_a_split_tournament_says_what_it_waits_for_blocks_nothing_and_is_cancelled(
        pg_url):
    async with arena_nodes(pg_url, ("node-1", "node-2"), web=(0, 1),
                           admin_token=ADMIN) as nodes:
        await _play_and_cancel(nodes)
        # Its status stayed cancelled: no node revived it as it stopped.
        assert nodes.stores[0].get_tournament("split-cup").status is TournamentStatus.CANCELLED


async def _play_and_cancel(nodes: Nodes) -> None:
    arenas, stores = nodes.arenas, nodes.stores
    web = [nodes.web(0), nodes.web(1)]
    admin = {"Authorization": f"Bearer {ADMIN}"}
    bots = Bots.start([random_bot(arenas[0].port, "north", 1),
                       random_bot(arenas[1].port, "south", 2),
                       random_bot(arenas[0].port, "east", 3),
                       random_bot(arenas[0].port, "west", 4)])
    try:
        async with aiohttp.ClientSession() as http:
            async def post(url: str, body: dict | None = None, **kw) -> tuple[int, dict]:
                async with http.post(url, json=body, **kw) as r:
                    return r.status, await r.json()

            async def get(url: str) -> dict:
                async with http.get(url) as r:
                    assert r.status == 200, await r.text()
                    return await r.json()

            status, _ = await post(f"{web[0]}/api/tournaments?id=split-cup",
                                   _cup("split cup", 7, ("north", "south")), headers=admin)
            assert status == 201
            await asyncio.sleep(0.5)  # the split one is first in line
            status, _ = await post(f"{web[1]}/api/tournaments?id=whole-cup",
                                   _cup("whole cup", 8, ("east", "west")), headers=admin)
            assert status == 201

            # The tournament created later, whose bots are on one node, is played.
            async def whole_finished() -> bool:
                t = (await get(f"{web[0]}/api/tournaments/whole-cup"))["tournament"]
                return t["status"] == "finished"
            await _wait_for(whole_finished, 100, "the whole cup to finish")
            # Over, its deal key is shown: the one its published commitment names.
            whole = (await get(f"{web[1]}/api/tournaments/whole-cup"))["tournament"]
            assert key_commitment(bytes.fromhex(whole["deal_key"])) == \
                whole["config"]["deals"]["commitment"]

            # The split one says what it waits for, and where its bots are.
            split = (await get(f"{web[1]}/api/tournaments/split-cup"))["tournament"]
            assert split["status"] in ("pending", "running")
            assert split["deal_key"] is None  # never before the end
            waiting = split["waiting"]
            assert {e["name"]: e["connected_to"] for e in waiting["entrants"]} == {
                "north": ["node-1"], "south": ["node-2"]}
            assert "one node" in waiting["reason"]
            page = await (await http.get(f"{web[0]}/tournaments/split-cup")).text()
            assert "waiting for" in page and "node-2" in page
            # Nobody claimed a slot it could not play (no claim churn).
            schedule = stores[0].get_schedule("split-cup")
            assert schedule and all(s.attempts == 0 for s in schedule)

            # Only the admin cancels it, on any node; then no node plays it.
            status, body = await post(f"{web[1]}/api/tournaments/split-cup/cancel")
            assert status == 401, body
            status, body = await post(f"{web[1]}/api/tournaments/split-cup/cancel",
                                      headers=admin)
            assert status == 200 and body["tournament"]["status"] == "cancelled", body
            status, body = await post(f"{web[1]}/api/tournaments/whole-cup/cancel",
                                      headers=admin)
            assert status == 409 and "finished" in body["error"]["message"], body
            split = (await get(f"{web[0]}/api/tournaments/split-cup"))["tournament"]
            assert split["status"] == "cancelled" and split.get("waiting") is None
            assert split["deal_key"] is None  # a cancelled tournament may be resumed
    finally:
        await bots.stop()
        await nodes.stop()
