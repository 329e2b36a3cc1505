"""A node name belongs to one running process, and a process aborts only
what is its own: its named matches and leases, or, unnamed, the node-less
matches no other unnamed process can be running."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from arena.server.config import ServerConfig
from arena.server.server import ArenaServer
from arena.storage import open_store
from arena.storage.base import MatchStatus, ScheduledMatch, TournamentRecord, TournamentStatus

from .helpers import match


def _server(store) -> ArenaServer:
    return ArenaServer(ServerConfig(port=0, http_port=None, matchmaking=False), store)


async def _started(store) -> ArenaServer:
    server = _server(store)
    await server.start()
    return server


@pytest.fixture(autouse=True)
def _no_node_from_the_environment(monkeypatch):
    monkeypatch.delenv("ARENA_NODE", raising=False)


async def test_an_unnamed_process_leaves_named_nodes_matches_running(db_location):
    named, unnamed = open_store(db_location, node="node-a"), open_store(db_location)
    node_a = await _started(named)
    try:
        named.create_match(match("live-on-a"))
        server = await _started(unnamed)
        await server.stop()
        assert named.get_match("live-on-a").status is MatchStatus.RUNNING
    finally:
        await node_a.stop()
        named.close()
        unnamed.close()


async def test_an_unnamed_process_beside_another_aborts_nothing_of_it(db_location):
    first, second = open_store(db_location), open_store(db_location)
    running = await _started(first)
    try:
        first.create_match(match("live-unnamed"))
        server = await _started(second)
        await server.stop()
        assert first.get_match("live-unnamed").status is MatchStatus.RUNNING
    finally:
        await running.stop()
        first.close()
        second.close()


async def test_an_unnamed_process_alone_closes_node_less_leftovers(db_location):
    crashed = open_store(db_location)
    crashed.create_match(match("left-over"))
    crashed.close()  # its process died: the match was never finished
    store = open_store(db_location)
    server = await _started(store)
    try:
        assert store.get_match("left-over").status is MatchStatus.ABORTED
    finally:
        await server.stop()
        store.close()


async def test_a_second_process_under_a_running_nodes_name_is_refused(db_location):
    from arena.storage.node_lock import NodeNameTakenError

    first, second = open_store(db_location, node="node-a"), open_store(db_location, node="node-a")
    running = await _started(first)
    try:
        first.create_match(match("live-on-a"))
        with pytest.raises(NodeNameTakenError, match="node-a.*in use"):
            await _server(second).start()
        assert first.get_match("live-on-a").status is MatchStatus.RUNNING
    finally:
        await running.stop()
        first.close()
        second.close()


async def test_a_restarted_node_releases_its_old_leases_at_once(db_location):
    old = open_store(db_location, node="node-a")
    old.create_tournament(
        TournamentRecord(id="t1", name="cup", game="muushig", config={},
                         status=TournamentStatus.RUNNING, created_at=1.0),
        [ScheduledMatch(tournament_id="t1", slot=0, players=["a"] * 5, seed="s:0")])
    assert old.claim_slot("t1", "node-a", 600.0) is not None
    old.create_match(match("was-playing"))
    old.close()  # the node dies holding a 10-minute lease
    store, other = open_store(db_location, node="node-a"), open_store(db_location, node="node-b")
    server = await _started(store)
    try:
        assert store.get_match("was-playing").status is MatchStatus.ABORTED
        lease = other.claim_slot("t1", "node-b", 30.0)
        assert lease is not None and lease.slot.slot == 0  # no 10 minutes to wait out
    finally:
        await server.stop()
        store.close()
        other.close()


HOLDER = """
import asyncio, sys, time
from arena.server.config import ServerConfig
from arena.server.server import ArenaServer
from arena.storage import open_store
async def main():
    server = ArenaServer(ServerConfig(port=0, http_port=None, matchmaking=False),
                         open_store(sys.argv[1], node="node-k"))
    await server.start()
    print("started", flush=True)
    await asyncio.sleep(600)
asyncio.run(main())
"""


@pytest.mark.timeout(60)
async def test_a_killed_nodes_name_is_free_at_once(db_location):
    from arena.storage.node_lock import NodeNameTakenError

    env = {**os.environ, "ARENA_PURE_PYTHON": "1"}
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, db_location], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        for line in holder.stdout:  # log lines first, then ours
            if line.strip() == "started":
                break
        else:
            pytest.fail("the holding process ended before it started its server")
        store = open_store(db_location, node="node-k")
        try:
            with pytest.raises(NodeNameTakenError):
                await _server(store).start()
            holder.send_signal(signal.SIGKILL)
            holder.wait(timeout=30)
            server = await _started(store)  # no lease or heartbeat to wait out
            await server.stop()
        finally:
            store.close()
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
