"""Three node processes share a tournament on PostgreSQL; two are killed
mid-way; the survivor finishes every slot, each exactly once."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from arena.storage import open_store
from arena.storage.base import MatchStatus, ScheduledMatch, TournamentRecord, TournamentStatus

WORKER = Path(__file__).with_name("node_worker.py")
ROOT = Path(__file__).resolve().parents[2]
SLOTS = 40
LEASE_S = 1.0
PLAY_S = 0.1


def _start(url: str, node: str, lines: "queue.Queue[tuple[str, str, float]]"
           ) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, str(WORKER), url, node, "t1", str(LEASE_S),
                             str(PLAY_S)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True, env=env)

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put((node, line.strip(), time.time()))
        lines.put((node, "exit", time.time()))

    threading.Thread(target=read, daemon=True).start()
    return proc


@pytest.mark.skipif(sys.platform == "win32", reason="needs SIGKILL")
def test_killed_nodes_lose_no_slot_and_count_none_twice(pg_url):
    store = open_store(pg_url)
    store.create_tournament(
        TournamentRecord(id="t1", name="cup", game="muushig", config={},
                         status=TournamentStatus.RUNNING, created_at=1.0),
        [ScheduledMatch(tournament_id="t1", slot=i, players=["a", "b", "c", "d", "e"],
                        seed=f"s:{i}") for i in range(SLOTS)])
    lines: queue.Queue[tuple[str, str, float]] = queue.Queue()
    nodes = {name: _start(pg_url, name, lines) for name in ("node-1", "node-2", "node-3")}
    finished: dict[str, int] = {name: 0 for name in nodes}
    armed: set[str] = set()
    killed: dict[str, float] = {}
    takeover_s: list[float] = []
    orphaned: dict[int, float] = {}  # slot a killed node was playing -> when it was killed
    try:
        while True:
            node, line, at = lines.get(timeout=60)
            word, *rest = line.split()
            if word == "claimed":
                slot = int(rest[0])
                if slot in orphaned:
                    takeover_s.append(at - orphaned.pop(slot))
                if node in armed:  # killed right after claiming: mid-match
                    nodes[node].send_signal(signal.SIGKILL)
                    killed[node] = time.time()
                    orphaned[slot] = killed[node]
                    armed.discard(node)
            elif word == "finished":
                finished[node] += 1
            elif word in ("exit", "done") and node == "node-3":
                break
            total = sum(finished.values())
            for victim, after in (("node-1", 8), ("node-2", 20)):
                if victim not in killed and total >= after:
                    armed.add(victim)
        nodes["node-3"].wait(timeout=60)
    finally:
        for proc in nodes.values():
            if proc.poll() is None:
                proc.kill()
            proc.wait(timeout=10)
    assert set(killed) == {"node-1", "node-2"}
    try:
        schedule = store.get_schedule("t1")
        assert all(s.match_id is not None for s in schedule)  # every slot played
        for dead in killed:  # the survivor closes the dead nodes' matches
            store.abort_unfinished(f"{dead} died", node=dead)
        done = store.finished_matches(tournament_id="t1")
        per_slot = {}
        for m in done:
            per_slot.setdefault(int(m.id.split("-s")[1].split("-")[0]), []).append(m.id)
        assert sorted(per_slot) == list(range(SLOTS))
        assert all(len(ids) == 1 for ids in per_slot.values())  # exactly once
        assert {s.slot: s.match_id for s in schedule} == {k: v[0] for k, v in per_slot.items()}
        assert store.count_matches(status=MatchStatus.RUNNING) == 0
        assert takeover_s and all(LEASE_S * 0.9 <= t <= LEASE_S + 5 for t in takeover_s)
        print(f"take-over after a kill: {', '.join(f'{t:.2f} s' for t in takeover_s)}")
    finally:
        store.close()
