"""Two nodes share a Swiss tournament: each round is paired once and its
slots are played once between them, on SQLite and on PostgreSQL."""

from __future__ import annotations

import pytest

from arena.storage.base import TournamentStatus
from arena.tournament.config import load_config
from arena.tournament.swiss import rounds_of
from arena.tournament.verify import verify_tournament
from tests.nodes.arenas import play_on_two_nodes
from tests.nodes.nodes import assert_each_slot_once
from tests.tournament_run.helpers import sample_entrant, write_config

SWISS = '[schedule]\nkind = "swiss"\nrounds = 3\n[rules]\nplayers = 2\n'


@pytest.mark.timeout(180)
async def test_two_nodes_pair_each_round_once_and_play_each_slot_once(db_location, tmp_path):
    entrants = "".join(sample_entrant(f"r{i}") for i in range(5))
    path = write_config(tmp_path, entrants, extra=SWISS)
    config = load_config(path)
    nodes, done = await play_on_two_nodes(db_location, config)
    assert done == [True, True]
    store = nodes[0].store
    tid = nodes[0].runner.record.id
    schedule = store.get_schedule(tid)
    assert sorted(rounds_of(schedule)) == [1, 2, 3] and len(schedule) == 18
    assert_each_slot_once(store, tid)  # no slot played twice
    assert nodes[0].runner.played and nodes[1].runner.played  # both nodes took slots
    assert store.get_tournament(tid).status is TournamentStatus.FINISHED
    report = verify_tournament(store, tid)
    assert report.ok, report.summary()
    for node in nodes:
        node.store.close()
