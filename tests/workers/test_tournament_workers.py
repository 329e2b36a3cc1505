"""A tournament under ``arena serve --workers 2``: the director runs in the
parent, and the parent keeps the connections of the entrants it waits
for, so the whole tournament plays at its tables while other bots keep
playing at the workers'."""

from __future__ import annotations

import asyncio
import time

import pytest

from arena.storage import open_store
from arena.storage.base import MatchStatus, TournamentRecord, TournamentStatus
from arena.tournament.config import parse_config

from .served import ARGS, Bots, tokens_for, until

CONFIG = {"name": "workers cup", "game": "muushig", "seed": 5, "duplicate": True,
          "rules": {"max_hands": 3},
          "limits": {"decision_ms": 1000, "bank_ms": 0},
          "schedule": {"kind": "balanced", "tables": 1, "house_bot": "heuristic"},
          "entrant": [{"name": "b-north", "remote": True}, {"name": "b-south", "remote": True}]}


def _create(db) -> int:
    config = parse_config(CONFIG)
    store = open_store(db)
    try:
        store.create_tournament(TournamentRecord(
            id="workers-cup", name=config.name, game=config.game, config=config.to_wire(),
            status=TournamentStatus.PENDING, created_at=time.time()), [])
    finally:
        store.close()
    return 5  # one balanced table: five matches, seats rotated


@pytest.mark.timeout(120)
async def test_a_tournament_plays_in_the_parent_beside_the_workers_lobby(served, tmp_path):
    matches = _create(tmp_path / "arena.db")
    arena = served(*ARGS)
    entrants = Bots(arena.port, ["north", "south"], names=["b-north", "b-south"])
    lobby = Bots(arena.port, tokens_for(0, 5, prefix="l") + tokens_for(1, 5, prefix="l"),
                 max_matches=1)
    try:
        store = open_store(arena.db)
        try:
            await until(lambda: store.get_tournament("workers-cup").status
                        is TournamentStatus.FINISHED, timeout_s=100, what="the tournament")
            await lobby.finish(timeout_s=60)
            finished = store.finished_matches(tournament_id="workers-cup")
            assert len(finished) == matches
            for match in finished:  # at the parent's tables, played by the entrants themselves
                record = store.get_match(match.id)
                assert record.node is None
                for seat, name in enumerate(record.players):
                    if name in ("b-north", "b-south"):
                        assert record.faults[seat].disconnects == 0
            assert store.count_matches(tournament_id="workers-cup",
                                       status=MatchStatus.RUNNING) == 0
            lobby_nodes = {store.get_match(m).node for m in lobby.results}
            assert lobby_nodes == {arena.worker_node(1), arena.worker_node(2)}
        finally:
            store.close()
    finally:
        await entrants.stop()
        await lobby.stop()


@pytest.mark.timeout(120)
async def test_entrants_connected_to_workers_before_the_tournament_come_to_the_parent(
        served, tmp_path):
    arena = served(*ARGS)
    # Connected first, so their connections went to the workers (with
    # reconnecting SDK bots, as bots run in earnest).
    entrants = Bots(arena.port, ["north", "south"], names=["b-north", "b-south"],
                    reconnect=True)
    try:
        await until(lambda: sum(w["handed"] for w in arena.workers()) >= 2,
                    what="the entrants at the workers")
        matches = await asyncio.to_thread(_create, tmp_path / "arena.db")
        store = open_store(arena.db)
        try:
            await until(lambda: store.get_tournament("workers-cup").status
                        is TournamentStatus.FINISHED, timeout_s=100, what="the tournament")
            finished = store.finished_matches(tournament_id="workers-cup")
            assert len(finished) == matches
            assert {store.get_match(m.id).node for m in finished} == {None}
        finally:
            store.close()
    finally:
        await entrants.stop()
