"""Two ``arena tournament --node`` processes share a tournament on
PostgreSQL; one runs with its clock 45 s ahead (libfaketime, the whole
process: wall clock and timers). Leases are judged on the database's
clock, so the fast node takes no live slot from the other: nothing is
replayed, nothing wasted, every slot played once."""

from __future__ import annotations

import shutil
import time

import pytest

from arena.storage import open_store
from arena.storage.base import MatchStatus
from arena.tournament.config import load_config
from arena.tournament.runner import tournament_id

from .nodes import assert_each_slot_once, start_node, stop_all, write_tournament

AHEAD_S = 45


@pytest.mark.skipif(shutil.which("faketime") is None,
                    reason="needs Debian's faketime (scripts/install-faketime)")
@pytest.mark.timeout(180)
def test_a_node_whose_clock_runs_ahead_steals_no_live_slot(pg_url, tmp_path):
    config = write_tournament(tmp_path, tables=4)
    tid = tournament_id(load_config(config))
    nodes = [start_node(config, pg_url, "node-1", tmp_path, secret=None),
             start_node(config, pg_url, "node-ahead", tmp_path, secret=None, ahead_s=AHEAD_S)]
    try:
        for node in nodes:
            assert node.proc.wait(timeout=160) == 0, node.log_path.read_text()[-3000:]
    finally:
        stop_all(nodes)
    store = open_store(pg_url)
    try:
        assert_each_slot_once(store, tid)
        finished = [store.get_match(m.id) for m in store.finished_matches(tournament_id=tid)]
        by_node = {m.node for m in finished}
        assert by_node == {"node-1", "node-ahead"}, by_node  # both played
        # The fast node's own clock really ran ahead (its matches' start times).
        ahead = [m.started_at for m in finished if m.node == "node-ahead"]
        assert min(ahead) > time.time() + AHEAD_S / 2
        # No slot was taken from a live node, so none was replayed.
        assert not any(n.log_events("slot_taken_over") for n in nodes)
        assert not any(n.log_events("slot_lost") for n in nodes)
        wasted = store.list_matches(tournament_id=tid, status=MatchStatus.ABORTED, limit=1000)
        assert wasted == [], [(m.node, store.get_match(m.id).abort_reason) for m in wasted]
    finally:
        store.close()
