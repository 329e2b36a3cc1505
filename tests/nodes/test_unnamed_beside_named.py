"""An unnamed ``arena serve`` started on a PostgreSQL store while two named
nodes play a shared tournament on it: it aborts none of their live matches
(a process only ever aborts its own), and the tournament ends with every
slot played once and no match wasted."""

from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
import sys
import time
import urllib.request

import pytest

from arena.storage import open_store
from arena.storage.base import MatchStatus
from arena.tournament.config import load_config
from arena.tournament.runner import tournament_id

from .nodes import ROOT, assert_each_slot_once, start_node, stop_all, write_tournament

_READY = re.compile(r"web on http://[\d.]+:(\d+)/")


@pytest.mark.timeout(180)
def test_an_unnamed_server_beside_named_nodes_aborts_none_of_their_matches(pg_url, tmp_path):
    config = write_tournament(tmp_path, tables=4)
    tid = tournament_id(load_config(config))
    nodes = [start_node(config, pg_url, name, tmp_path, secret=None)
             for name in ("node-1", "node-2")]
    store = open_store(pg_url)
    unnamed = None
    try:
        deadline = time.monotonic() + 90
        while True:  # both named nodes are in the middle of a match
            assert time.monotonic() < deadline, nodes[0].log_path.read_text()[-3000:]
            try:
                running = {m.node for m in store.list_matches(
                    tournament_id=tid, status=MatchStatus.RUNNING)}
            except Exception:  # noqa: BLE001 - not created yet
                running = set()
            if {"node-1", "node-2"} <= running:
                break
            time.sleep(0.05)
        env = {k: v for k, v in os.environ.items() if k != "ARENA_NODE"}
        env["PYTHONPATH"] = str(ROOT)
        unnamed = subprocess.Popen(
            [sys.executable, "-m", "arena.cli", "serve", "--db", pg_url, "--any-token",
             "--port", "0", "--http-port", "0"], stdout=subprocess.PIPE,
            stderr=open(tmp_path / "unnamed.log", "wb"), env=env, start_new_session=True)
        port = None
        ready_by = time.monotonic() + 60
        while port is None and time.monotonic() < ready_by:
            assert unnamed.poll() is None, (tmp_path / "unnamed.log").read_text()[-3000:]
            if select.select([unnamed.stdout], [], [], 0.2)[0]:
                found = _READY.search(unnamed.stdout.readline().decode())
                port = int(found.group(1)) if found else None
        assert port is not None, (tmp_path / "unnamed.log").read_text()[-3000:]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health", timeout=10) as r:
            assert json.loads(r.read())["store"]["node"] is None
        for node in nodes:
            assert node.proc.wait(timeout=150) == 0, node.log_path.read_text()[-3000:]
        unnamed.send_signal(signal.SIGTERM)
        assert unnamed.wait(timeout=30) == 0
        assert_each_slot_once(store, tid)
        wasted = store.list_matches(tournament_id=tid, status=MatchStatus.ABORTED, limit=1000)
        assert wasted == [], [(m.node, store.get_match(m.id).abort_reason) for m in wasted]
        assert {m.node for m in store.finished_matches(tournament_id=tid)} == {"node-1",
                                                                              "node-2"}
    finally:
        stop_all(nodes)
        if unnamed is not None and unnamed.poll() is None:
            os.killpg(unnamed.pid, signal.SIGKILL)
            unnamed.wait(timeout=10)
        store.close()
