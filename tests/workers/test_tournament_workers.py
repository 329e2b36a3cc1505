"""A tournament under ``arena serve --workers 2``: the director runs in the
parent, and the parent keeps the connections of the entrants it waits
for, so the whole tournament plays at its tables while other bots keep
playing at the workers'."""

from __future__ import annotations

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
    # Entrants' tokens chosen to route to different workers: the parent keeps both.
    entrants = Bots(arena.port, [tokens_for(0, 1, prefix="north")[0]], names=["b-north"])
    entrants.add(tokens_for(1, 1, prefix="south")[0], "b-south")
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
            assert lobby_nodes == {"arena-w1", "arena-w2"}
        finally:
            store.close()
    finally:
        await entrants.stop()
        await lobby.stop()
