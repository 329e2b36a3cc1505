"""Two nodes share a gauntlet: each deck set is added once, its slots are
played once between them, and they stop where the rule stops, on SQLite
and on PostgreSQL."""

from __future__ import annotations

import asyncio

import pytest

from arena.server.config import ServerConfig
from arena.server.server import ArenaServer
from arena.storage import open_store
from arena.storage.base import MatchStatus, TournamentStatus
from arena.tournament.config import load_config
from arena.tournament.gauntlet_play import decided, gauntlet_result, sets_of
from arena.tournament.runner import create_or_load
from arena.tournament.shared import QueueSettings, SharedTournamentRunner
from arena.tournament.verify import verify_tournament
from tests.tournament_run.helpers import sample_entrant, write_config

# Tables of two: the challenger and one random bot per deck set, two matches
# a set; a loose rule so the run is short either way, capped at eight sets.
GAUNTLET = ('[schedule]\nkind = "gauntlet"\nchallenger = "champ"\nmax_sets = 8\n'
            'alpha = 0.2\neffect = 0.45\n[rules]\nplayers = 2\n')


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request: pytest.FixtureRequest, tmp_path) -> str:
    if request.param == "postgresql":
        return str(request.getfixturevalue("pg_url"))
    return str(tmp_path / "arena.db")


@pytest.mark.timeout(180)
async def test_two_nodes_add_each_deck_set_once_and_stop_where_the_rule_stops(db, tmp_path):
    entrants = (sample_entrant("champ", "python_heuristic") + sample_entrant("r1")
                + sample_entrant("r2"))
    path = write_config(tmp_path, entrants, extra=GAUNTLET)
    config = load_config(path)
    stores, servers, runners = [], [], []
    for node in ("node-a", "node-b"):
        store = open_store(db, node=node)
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
    sets = sets_of(schedule)
    assert sorted(sets) == list(range(1, len(sets) + 1))  # no set added twice
    assert all(len(slots) == 2 for slots in sets.values())
    assert decided(store, config, schedule)
    finished = store.list_matches(tournament_id=tid, status=MatchStatus.FINISHED, limit=100)
    assert {m.id for m in finished} == {s.match_id for s in schedule}
    assert len(finished) == len(schedule)  # no slot played twice
    assert store.get_tournament(tid).status is TournamentStatus.FINISHED
    result = gauntlet_result(store, config, tid)
    assert result is not None and result["verdict"] != "continue"
    report = verify_tournament(store, tid)
    assert report.ok, report.summary()
    for s in stores:
        s.close()
