"""Three arena nodes on one PostgreSQL share a tournament of 40 matches;
two of them are SIGKILLed mid-match, one after the other; the survivor
finishes every slot, each exactly once, and its web showed the live
matches of the others while they played."""

from __future__ import annotations

import time
import urllib.error

import pytest

from arena.storage import open_store
from arena.storage.base import MatchStatus
from arena.tournament.config import load_config
from arena.tournament.runner import tournament_id

from .nodes import (
    assert_each_slot_once,
    assert_standings_from_logs,
    finished_slots,
    lease_holders,
    start_node,
    stop_all,
    write_tournament,
)

LEASE_S = 2.0
KILLS = (("node-1", 10), ("node-2", 22))  # (victim, after this many finished slots)


@pytest.mark.timeout(120)
def test_three_nodes_share_a_tournament_and_survive_two_kills(pg_url, tmp_path):
    config = write_tournament(tmp_path, tables=8)
    tid = tournament_id(load_config(config))
    nodes = {name: start_node(config, pg_url, name, tmp_path, lease_s=LEASE_S)
             for name in ("node-1", "node-2", "node-3")}
    survivor = nodes["node-3"]
    store = open_store(pg_url)
    killed: dict[str, float] = {}
    orphaned: dict[int, tuple[str, float]] = {}  # slot a dead node held -> (node, killed at)
    takeover_s: list[float] = []
    seen_remote_live: set[str] = set()  # nodes whose live matches node-3's web showed
    try:
        deadline = time.time() + 100
        while survivor.proc.poll() is None:
            assert time.time() < deadline, "the tournament did not end in time"
            time.sleep(0.05)
            try:
                holders = lease_holders(store, tid)
                done = finished_slots(store, tid)
            except Exception:  # noqa: BLE001 - not created yet
                continue
            for slot, (dead, at) in list(orphaned.items()):
                if holders.get(slot) != dead:  # claimed (or already finished) by another
                    takeover_s.append(time.time() - at)
                    del orphaned[slot]
            for victim, after in KILLS:
                if victim in killed or done < after:
                    continue
                held = [s for s, n in holders.items() if n == victim]
                running = store.list_matches(tournament_id=tid, status=MatchStatus.RUNNING)
                if held and any(m.node == victim for m in running):  # mid-match
                    killed[victim] = nodes[victim].kill()
                    for slot in held:
                        orphaned[slot] = (victim, killed[victim])
            try:
                for match in survivor.live_matches():
                    if match.get("node") and match["node"] != survivor.name:
                        seen_remote_live.add(match["node"])
            except (urllib.error.URLError, OSError, KeyError):
                pass
        assert survivor.proc.wait(timeout=10) == 0, survivor.log_path.read_text()[-3000:]
    finally:
        stop_all(list(nodes.values()))
    try:
        assert set(killed) == {"node-1", "node-2"}
        assert len(store.get_schedule(tid)) == 40
        assert_each_slot_once(store, tid)
        assert_standings_from_logs(store, tid)
        # The nodes shared the work while they lived.
        by_node = {m.node for m in store.finished_matches(tournament_id=tid)}
        assert "node-3" in by_node and len(by_node) >= 2
        # The dead nodes' slots were replayed by the survivor once their
        # leases ran out: renewed every third of the lease, a lease has 2/3
        # to 3/3 of it left at the kill.
        assert takeover_s and all(LEASE_S * 0.6 <= t <= LEASE_S + 4 for t in takeover_s), \
            takeover_s
        assert survivor.log_events("slot_taken_over")
        # The local entrants played every match themselves (none by autopilot).
        assert not any(n.log_events("seat_played_by_autopilot") for n in nodes.values())
        # node-3's web showed matches node-1 and node-2 played, live.
        assert {"node-1", "node-2"} & seen_remote_live, seen_remote_live
        aborted = store.list_matches(tournament_id=tid, status=MatchStatus.ABORTED,
                                     limit=1000)
        assert {m.node for m in aborted} >= set(killed)  # the dead nodes' cut matches
        print(f"take-over after a kill: {', '.join(f'{t:.2f} s' for t in takeover_s)}")
    finally:
        store.close()
