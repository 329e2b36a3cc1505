"""Two ``arena serve`` nodes (in one process here) direct one tournament
created over HTTP with remote entrants: the slots are played on the node
the entrants are connected to, each slot once."""

from __future__ import annotations

import time

import pytest

from arena.storage.base import MatchStatus, TournamentRecord, TournamentStatus
from arena.tournament.config import parse_config

from .arenas import arena_nodes, pair_on, until_finished
from .nodes import assert_each_slot_once

CONFIG = {"name": "remote cup", "game": "muushig", "seed": 3, "duplicate": True,
          "limits": {"decision_ms": 1000, "bank_ms": 0},
          "schedule": {"kind": "balanced", "tables": 2, "house_bot": "heuristic"},
          "entrant": [{"name": "north", "remote": True}, {"name": "south", "remote": True}]}


@pytest.mark.timeout(90)
async def test_slots_go_to_the_node_where_their_remote_bots_are(pg_url):
    config = parse_config(CONFIG)
    async with arena_nodes(pg_url, ("node-1", "node-2")) as nodes:
        store = nodes.stores[0]
        store.create_tournament(TournamentRecord(
            id="remote-cup", name=config.name, game=config.game, config=config.to_wire(),
            status=TournamentStatus.PENDING, created_at=time.time()), [])
        bots = pair_on(nodes.arenas[1].server.port)
        try:
            await until_finished(store, "remote-cup", timeout_s=80)
        finally:
            await bots.stop()
            await nodes.stop()
        assert_each_slot_once(store, "remote-cup")
        finished = store.finished_matches(tournament_id="remote-cup")
        assert len(finished) == 10 and {m.node for m in finished} == {"node-2"}
        for match in finished:  # played by the bots, not by an autopilot in their name
            record = store.get_match(match.id)
            for seat, name in enumerate(record.players):
                if name in ("north", "south"):
                    assert record.faults[seat].disconnects == 0
        assert store.count_matches(status=MatchStatus.RUNNING) == 0
