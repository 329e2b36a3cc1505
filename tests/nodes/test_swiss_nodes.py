"""Two nodes share a Swiss tournament: each round is paired once and its
slots are played once between them, on SQLite and on PostgreSQL."""

from __future__ import annotations

import asyncio

import pytest

from arena.server.config import ServerConfig
from arena.server.server import ArenaServer
from arena.storage import open_store
from arena.storage.base import MatchStatus, TournamentStatus
from arena.tournament.config import load_config
from arena.tournament.runner import create_or_load
from arena.tournament.shared import QueueSettings, SharedTournamentRunner
from arena.tournament.swiss import rounds_of
from arena.tournament.verify import verify_tournament
from tests.tournament_run.helpers import sample_entrant, write_config

SWISS = '[schedule]\nkind = "swiss"\nrounds = 3\n[rules]\nplayers = 2\n'


@pytest.mark.timeout(180)
async def test_two_nodes_pair_each_round_once_and_play_each_slot_once(db_location, tmp_path):
    entrants = "".join(sample_entrant(f"r{i}") for i in range(5))
    path = write_config(tmp_path, entrants, extra=SWISS)
    config = load_config(path)
    stores, servers, runners = [], [], []
    for node in ("node-a", "node-b"):
        store = open_store(db_location, node=node)
        record, _ = create_or_load(store, config)
        server = ArenaServer(ServerConfig(port=0, http_port=None, matchmaking=False), store)
        await server.start()
        stores.append(store)
        servers.append(server)
        runners.append(SharedTournamentRunner(server, config, record, queue=QueueSettings(
            node=node, lease_s=5.0, poll_s=0.05)))
    try:
        done = await asyncio.wait_for(asyncio.gather(*(r.run() for r in runners)), 150)
    finally:
        for server in servers:
            await server.stop()
    assert done == [True, True]
    store = stores[0]
    tid = runners[0].record.id
    schedule = store.get_schedule(tid)
    assert sorted(rounds_of(schedule)) == [1, 2, 3] and len(schedule) == 18
    finished = store.list_matches(tournament_id=tid, status=MatchStatus.FINISHED, limit=100)
    assert {m.id for m in finished} == {s.match_id for s in schedule}
    assert len(finished) == 18  # no slot played twice
    assert runners[0].played and runners[1].played  # both nodes took slots
    assert store.get_tournament(tid).status is TournamentStatus.FINISHED
    report = verify_tournament(store, tid)
    assert report.ok, report.summary()
    for s in stores:
        s.close()
