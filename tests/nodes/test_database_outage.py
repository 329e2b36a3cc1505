"""PostgreSQL stops for a while under two nodes playing a shared
tournament, then comes back: the nodes keep running, matches cut by the
outage are aborted (never stored half), their slots are replayed, nothing
finished is lost, and the tournament ends with every slot counted once."""

from __future__ import annotations

import time

import pytest

from arena.storage import open_store
from arena.storage.base import MatchStatus
from arena.tournament.config import load_config
from arena.tournament.runner import tournament_id

from .nodes import (
    assert_each_slot_once,
    assert_standings_from_logs,
    finished_slots,
    start_node,
    stop_all,
    write_tournament,
)

OUTAGE_S = 2.0


@pytest.mark.timeout(150)
def test_a_database_restart_under_load_loses_nothing_finished(pg_cluster, pg_url, tmp_path):
    config = write_tournament(tmp_path, tables=4, name="outage")
    tid = tournament_id(load_config(config))
    nodes = [start_node(config, pg_url, name, tmp_path, lease_s=3.0)
             for name in ("node-a", "node-b")]
    store = open_store(pg_url)
    before: set[str] = set()
    try:
        deadline = time.time() + 60
        while True:
            assert time.time() < deadline and all(n.proc.poll() is None for n in nodes)
            time.sleep(0.1)
            try:
                if finished_slots(store, tid) >= 6 and store.count_matches(
                        tournament_id=tid, status=MatchStatus.RUNNING) >= 1:
                    break
            except Exception:  # noqa: BLE001 - not created yet
                continue
        before = {m.id for m in store.finished_matches(tournament_id=tid)}
        pg_cluster.pg_ctl("stop", "-m", "fast")  # cuts every connection
        time.sleep(OUTAGE_S)
        assert all(n.proc.poll() is None for n in nodes), "a node died with the database"
        pg_cluster.pg_ctl("start")
        for node in nodes:
            assert node.proc.wait(timeout=90) == 0, node.log_path.read_text()[-3000:]
    finally:
        stop_all(nodes)
    try:
        after = {m.id for m in store.finished_matches(tournament_id=tid)}
        assert before <= after  # nothing finished is lost
        assert_each_slot_once(store, tid)
        assert_standings_from_logs(store, tid)  # no finished match has a cut log
        outage_errors = sum(len(n.log_events("store_unavailable")) + len(n.log_events(
            "claim_failed")) + len(n.log_events("lease_not_renewed")) for n in nodes)
        aborted = store.list_matches(tournament_id=tid, status=MatchStatus.ABORTED, limit=1000)
        assert outage_errors or aborted, "the outage went unnoticed: the test tested nothing"
        assert all(m.abort_reason for m in aborted)
        # The local entrants played every match themselves (none by autopilot).
        assert not any(n.log_events("seat_played_by_autopilot") for n in nodes)
        print(f"outage: {len(before)} finished before, {len(aborted)} aborted and replayed, "
              f"{outage_errors} store errors logged")
    finally:
        store.close()
