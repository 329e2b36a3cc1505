"""Two nodes share a gauntlet: each deck set is added once, its slots are
played once between them, and they stop where the rule stops, on SQLite
and on PostgreSQL."""

from __future__ import annotations

import pytest

from arena.storage.base import TournamentStatus
from arena.tournament.config import load_config
from arena.tournament.gauntlet_play import decided, gauntlet_result, sets_of
from arena.tournament.verify import verify_tournament
from tests.nodes.arenas import play_on_two_nodes
from tests.nodes.nodes import assert_each_slot_once
from tests.tournament_run.helpers import sample_entrant, write_config

# Tables of two: the challenger and one random bot per deck set, two matches
# a set; a loose rule so the run is short either way, capped at eight sets.
GAUNTLET = ('[schedule]\nkind = "gauntlet"\nchallenger = "champ"\nmax_sets = 8\n'
            'alpha = 0.2\neffect = 0.45\n[rules]\nplayers = 2\n')


@pytest.mark.timeout(180)
async def test_two_nodes_add_each_deck_set_once_and_stop_where_the_rule_stops(
        db_location, tmp_path):
    entrants = (sample_entrant("champ", "python_heuristic") + sample_entrant("r1")
                + sample_entrant("r2"))
    path = write_config(tmp_path, entrants, extra=GAUNTLET)
    config = load_config(path)
    nodes, done = await play_on_two_nodes(db_location, config)
    assert done == [True, True]
    store = nodes[0].store
    tid = nodes[0].runner.record.id
    schedule = store.get_schedule(tid)
    sets = sets_of(schedule)
    assert sorted(sets) == list(range(1, len(sets) + 1))  # no set added twice
    assert all(len(slots) == 2 for slots in sets.values())
    assert decided(store, config, schedule)
    assert_each_slot_once(store, tid)  # no slot played twice
    assert store.get_tournament(tid).status is TournamentStatus.FINISHED
    result = gauntlet_result(store, config, tid)
    assert result is not None and result["verdict"] != "continue"
    report = verify_tournament(store, tid)
    assert report.ok, report.summary()
    for node in nodes:
        node.store.close()
