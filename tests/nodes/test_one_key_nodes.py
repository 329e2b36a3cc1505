"""A tournament created over HTTP on one node of a PostgreSQL arena is
dealt from one key by every node that plays it, and ``arena verify`` on the
database URL recomputes every deck of it from that key."""

from __future__ import annotations

import argparse
import asyncio

import pytest

from arena.storage.base import TournamentStatus
from arena.storage.deal_keys import DealKeyring
from arena.tournament.verify import run_verify
from protocol.deals import key_commitment

from .arenas import arena_nodes, create_tournament, pair_on
from .nodes import assert_each_slot_once

ADMIN = "admin-token-for-nodes"
CUP = {"name": "one key cup", "game": "muushig", "seed": 5, "duplicate": True,
       "limits": {"decision_ms": 1000, "bank_ms": 0},
       "schedule": {"kind": "balanced", "tables": 2, "house_bot": "heuristic"},
       "entrant": [{"name": "north", "remote": True}, {"name": "south", "remote": True}]}


@pytest.mark.timeout(180)
async def test_an_http_tournament_on_three_nodes_has_one_key_and_verifies(pg_url, capsys):
    async with arena_nodes(pg_url, ("node-1", "node-2", "node-3"), web=(0,),
                           admin_token=ADMIN) as nodes:
        store = nodes.stores[0]
        bots = None
        try:
            created = await create_tournament(nodes, "one-key", CUP, ADMIN)
            published = created["config"]["deals"]["commitment"]
            assert published  # committed when created, before any match
            # The bots play on node 2 first, then move to node 3: two nodes deal.
            bots = pair_on(nodes.arenas[1].server.port)
            async with asyncio.timeout(150):
                while len(store.finished_matches(tournament_id="one-key")) < 3:
                    await asyncio.sleep(0.1)
                await bots.stop()
                bots = pair_on(nodes.arenas[2].server.port)
                while store.get_tournament("one-key").status is not TournamentStatus.FINISHED:
                    await asyncio.sleep(0.1)
        finally:
            if bots is not None:
                await bots.stop()
            await nodes.stop()
        assert_each_slot_once(store, "one-key")
        played_on = {m.node for m in store.finished_matches(tournament_id="one-key")}
        assert {"node-2", "node-3"} <= played_on
        record = store.get_tournament("one-key")
        assert record.config["deals"]["commitment"] == published
        key = DealKeyring.for_store(store).load("one-key")
        assert key is not None and key_commitment(key) == published
    capsys.readouterr()
    code = run_verify(argparse.Namespace(tournament="one-key", match=None, db=pg_url))
    out = capsys.readouterr()
    assert code == 0, out.err
    assert f"deal key: {key.hex()}" in out.out
