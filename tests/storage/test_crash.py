"""SIGKILL in the middle of matches: finished ones survive, the rest are aborted."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from arena.storage.base import MatchStatus
from arena.storage import open_store
from arena.storage.sqlite import SqliteStore

WORKER = Path(__file__).with_name("crash_worker.py")
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(sys.platform == "win32", reason="needs SIGKILL")
def test_a_killed_server_keeps_every_finished_match(db_location):
    db = db_location
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, str(WORKER), str(db)], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, env=env)
    promised: dict[str, int] = {}
    stalled: dict[str, int] = {}
    try:
        assert proc.stdout is not None
        for line in proc.stdout:  # blocks on the worker's output, no sleeping
            if not line.startswith(("finished ", "stalled ")):
                continue  # the worker's log lines
            kind, match_id, n_events = line.split()
            (promised if kind == "finished" else stalled)[match_id] = int(n_events)
            if len(promised) >= 12 and stalled:
                break
        assert len(promised) >= 12 and stalled, "the worker stopped early"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL

    store = open_store(db)
    try:
        aborted = store.abort_unfinished()
        assert set(stalled) <= set(aborted)
        for match_id, n_events in stalled.items():  # its flushed events are kept
            assert len(store.get_events(match_id)) >= n_events
        for match_id, n_events in promised.items():
            record = store.get_match(match_id)
            assert record.status is MatchStatus.FINISHED, match_id
            assert record.result is not None and record.faults is not None
            assert [e.seq for e in store.get_events(match_id)] == list(range(n_events))
        for match_id in aborted:
            record = store.get_match(match_id)
            assert record.status is MatchStatus.ABORTED
            assert record.abort_reason == "server restarted" and record.result is None
            seqs = [e.seq for e in store.get_events(match_id)]
            assert seqs == list(range(len(seqs)))  # a prefix, never a torn log
        assert store.count_matches(status=MatchStatus.RUNNING) == 0
        # finished matches the worker had not yet announced are intact too
        for record in store.list_matches(status=MatchStatus.FINISHED, limit=10_000):
            assert record.result is not None
        if isinstance(store, SqliteStore):
            integrity = store._write.execute("PRAGMA integrity_check").fetchone()[0]
            assert integrity == "ok"
    finally:
        store.close()
