"""A slot whose bots leave the node that claimed it, between the claim and
their seats, goes to the node they moved to: the node that claimed it gives
it back after a short wait instead of waiting out the claim timeout and then
playing the bots' seats by autopilot."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from .arenas import Bots, arena_nodes, create_tournament, pair_on, until_finished
from .nodes import assert_each_slot_once

ADMIN = "admin-token-for-nodes"
CUP = {"name": "moving cup", "game": "muushig", "seed": 9, "duplicate": False,
       "limits": {"decision_ms": 1000, "bank_ms": 0},
       "schedule": {"kind": "balanced", "tables": 1, "house_bot": "heuristic"},
       "entrant": [{"name": "north", "remote": True}, {"name": "south", "remote": True}]}


@pytest.mark.timeout(180)
async def test_a_slot_whose_bots_moved_away_is_played_where_they_went(pg_url) -> None:
    async with arena_nodes(pg_url, ("node-a", "node-b"), web=(0,), admin_token=ADMIN) as nodes:
        store = nodes.stores[0]
        moved = asyncio.Event()
        bots: dict[str, Bots] = {}
        node_a = nodes.arenas[0].server
        play_match = node_a.play_match

        async def move_then_play(*args: Any, **kwargs: Any) -> Any:
            # The first match node A starts: its bots leave for node B after
            # node A claimed the slot and before it claims their seats.
            if not moved.is_set():
                moved.set()
                await bots["here"].stop()
                bots["here"] = pair_on(nodes.arenas[1].server.port)
            return await play_match(*args, **kwargs)

        node_a.play_match = move_then_play  # type: ignore[method-assign]
        bots["here"] = pair_on(node_a.port)
        try:
            await create_tournament(nodes, "moving", CUP, ADMIN)
            await until_finished(store, "moving", timeout_s=150)
        finally:
            await bots["here"].stop()
            await nodes.stop()
        assert moved.is_set()
        assert_each_slot_once(store, "moving")
        played_on = {m.node for m in store.finished_matches(tournament_id="moving")}
        assert played_on == {"node-b"}  # never node A, by autopilot, for bots that left it
