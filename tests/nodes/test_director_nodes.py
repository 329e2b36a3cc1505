"""Two ``arena serve`` nodes (in one process here) direct one tournament
created over HTTP with remote entrants: the slots are played on the node
the entrants are connected to, each slot once."""

from __future__ import annotations

import asyncio
import random
import time

import pytest

from arena.server.config import ServerConfig
from arena.app import Arena
from arena.storage import open_store
from arena.storage.base import MatchStatus, TournamentRecord, TournamentStatus
from arena.tournament.config import parse_config
from protocol.sdk.client import BotClient

from .nodes import assert_each_slot_once

CONFIG = {"name": "remote cup", "game": "muushig", "seed": 3, "duplicate": True,
          "limits": {"decision_ms": 1000, "bank_ms": 0},
          "schedule": {"kind": "balanced", "tables": 2, "house_bot": "heuristic"},
          "entrant": [{"name": "north", "remote": True}, {"name": "south", "remote": True}]}


def _strategy(seed: int):
    rng = random.Random(seed)
    return lambda phase, legal, state: rng.choice(legal)


@pytest.mark.timeout(90)
async def test_slots_go_to_the_node_where_their_remote_bots_are(pg_url):
    stores = [open_store(pg_url, node=name) for name in ("node-1", "node-2")]
    arenas = [Arena(ServerConfig(port=0, http_port=None, matchmaking=False, open=True,
                                 run_tournaments=True), store) for store in stores]
    servers = [arena.server for arena in arenas]
    config = parse_config(CONFIG)
    stores[0].create_tournament(TournamentRecord(
        id="remote-cup", name=config.name, game=config.game, config=config.to_wire(),
        status=TournamentStatus.PENDING, created_at=time.time()), [])
    for arena in arenas:
        await arena.start()
    on_node_2 = servers[1]
    bots = [BotClient("127.0.0.1", on_node_2.port, f"token-{name}", name, _strategy(i),
                      reconnect=False, threaded=False)
            for i, name in enumerate(("north", "south"))]
    tasks = [asyncio.create_task(bot.run()) for bot in bots]
    try:
        async with asyncio.timeout(80):
            while stores[0].get_tournament("remote-cup").status is not TournamentStatus.FINISHED:
                await asyncio.sleep(0.1)
    finally:
        for bot in bots:
            await bot.stop()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for arena in arenas:
            await arena.stop()
    try:
        assert_each_slot_once(stores[0], "remote-cup")
        finished = stores[0].finished_matches(tournament_id="remote-cup")
        assert len(finished) == 10 and {m.node for m in finished} == {"node-2"}
        for match in finished:  # played by the bots, not by an autopilot in their name
            record = stores[0].get_match(match.id)
            for seat, name in enumerate(record.players):
                if name in ("north", "south"):
                    assert record.faults[seat].disconnects == 0
        assert stores[0].count_matches(status=MatchStatus.RUNNING) == 0
    finally:
        for store in stores:
            store.close()
