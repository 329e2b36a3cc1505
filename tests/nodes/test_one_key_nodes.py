"""A tournament created over HTTP on one node of a PostgreSQL arena is
dealt from one key by every node that plays it, and ``arena verify`` on the
database URL recomputes every deck of it from that key."""

from __future__ import annotations

import argparse
import asyncio
import random

import aiohttp
import pytest

from arena.app import Arena
from arena.server.config import ServerConfig
from arena.storage import open_store
from arena.storage.base import TournamentStatus
from arena.storage.deal_keys import DealKeyring
from arena.tournament.verify import run_verify
from protocol.deals import key_commitment
from protocol.sdk.client import BotClient

from .nodes import assert_each_slot_once

ADMIN = "admin-token-for-nodes"
CUP = {"name": "one key cup", "game": "muushig", "seed": 5, "duplicate": True,
       "limits": {"decision_ms": 1000, "bank_ms": 0},
       "schedule": {"kind": "balanced", "tables": 2, "house_bot": "heuristic"},
       "entrant": [{"name": "north", "remote": True}, {"name": "south", "remote": True}]}


def _strategy(seed: int):
    rng = random.Random(seed)
    return lambda phase, legal, state: rng.choice(legal)


async def _connect(port: int) -> tuple[list[BotClient], list[asyncio.Task]]:
    bots = [BotClient("127.0.0.1", port, f"token-{name}", name, _strategy(i),
                      reconnect=False, threaded=False)
            for i, name in enumerate(("north", "south"))]
    return bots, [asyncio.create_task(bot.run()) for bot in bots]


async def _disconnect(bots: list[BotClient], tasks: list[asyncio.Task]) -> None:
    for bot in bots:
        await bot.stop()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


@pytest.mark.timeout(180)
async def test_an_http_tournament_on_three_nodes_has_one_key_and_verifies(pg_url, capsys):
    stores = [open_store(pg_url, node=f"node-{i}") for i in (1, 2, 3)]
    arenas = [Arena(ServerConfig(port=0, http_port=0 if i == 0 else None, matchmaking=False,
                                 open=True, run_tournaments=True, admin_token=ADMIN), store)
              for i, store in enumerate(stores)]
    for arena in arenas:
        await arena.start()
    bots: list[BotClient] = []
    tasks: list[asyncio.Task] = []
    try:
        async with aiohttp.ClientSession() as http:
            response = await http.post(
                f"http://127.0.0.1:{arenas[0].http_port}/api/tournaments?id=one-key",
                json=CUP, headers={"Authorization": f"Bearer {ADMIN}"})
            assert response.status == 201, await response.text()
            created = (await response.json())["tournament"]
        published = created["config"]["deals"]["commitment"]
        assert published  # committed when created, before any match
        # The bots play on node 2 first, then move to node 3: two nodes deal.
        bots, tasks = await _connect(arenas[1].server.port)
        async with asyncio.timeout(150):
            while len(stores[0].finished_matches(tournament_id="one-key")) < 3:
                await asyncio.sleep(0.1)
            await _disconnect(bots, tasks)
            bots, tasks = await _connect(arenas[2].server.port)
            while stores[0].get_tournament("one-key").status is not TournamentStatus.FINISHED:
                await asyncio.sleep(0.1)
    finally:
        await _disconnect(bots, tasks)
        for arena in arenas:
            await arena.stop()
    try:
        assert_each_slot_once(stores[0], "one-key")
        nodes = {m.node for m in stores[0].finished_matches(tournament_id="one-key")}
        assert {"node-2", "node-3"} <= nodes
        record = stores[0].get_tournament("one-key")
        assert record.config["deals"]["commitment"] == published
        key = DealKeyring.for_store(stores[0]).load("one-key")
        assert key is not None and key_commitment(key) == published
    finally:
        for store in stores:
            store.close()
    capsys.readouterr()
    code = run_verify(argparse.Namespace(tournament="one-key", match=None, db=pg_url))
    out = capsys.readouterr()
    assert code == 0, out.err
    assert f"deal key: {key.hex()}" in out.out
