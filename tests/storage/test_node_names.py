"""A node name belongs to one running process, and a process aborts only
what is its own: its named matches and leases, or, unnamed, the node-less
matches no other unnamed process can be running."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from arena.server.config import ServerConfig
from arena.server.server import ArenaServer
from arena.storage import open_store
from arena.storage.base import MatchStatus, ScheduledMatch, TournamentRecord, TournamentStatus

from .helpers import match, serving, stores_at


def _server(store) -> ArenaServer:
    return ArenaServer(ServerConfig(port=0, http_port=None, matchmaking=False), store)


@pytest.fixture(autouse=True)
def _no_node_from_the_environment(monkeypatch):
    monkeypatch.delenv("ARENA_NODE", raising=False)


async def test_an_unnamed_process_leaves_named_nodes_matches_running(db_location):
    with stores_at(db_location, "node-a", None) as (named, unnamed):
        async with serving(named):
            named.create_match(match("live-on-a"))
            async with serving(unnamed):
                pass
            assert named.get_match("live-on-a").status is MatchStatus.RUNNING


async def test_an_unnamed_process_beside_another_aborts_nothing_of_it(db_location):
    with stores_at(db_location, None, None) as (first, second):
        async with serving(first):
            first.create_match(match("live-unnamed"))
            async with serving(second):
                pass
            assert first.get_match("live-unnamed").status is MatchStatus.RUNNING


async def test_an_unnamed_process_alone_closes_node_less_leftovers(db_location):
    with stores_at(db_location, None) as (crashed,):
        crashed.create_match(match("left-over"))
    # Its process died: the match was never finished.
    with stores_at(db_location, None) as (store,):
        async with serving(store):
            assert store.get_match("left-over").status is MatchStatus.ABORTED


async def test_a_second_process_under_a_running_nodes_name_is_refused(db_location):
    from arena.storage.node_lock import NodeNameTakenError

    with stores_at(db_location, "node-a", "node-a") as (first, second):
        async with serving(first):
            first.create_match(match("live-on-a"))
            with pytest.raises(NodeNameTakenError, match="node-a.*in use"):
                await _server(second).start()
            assert first.get_match("live-on-a").status is MatchStatus.RUNNING


async def test_a_restarted_node_releases_its_old_leases_at_once(db_location):
    old = open_store(db_location, node="node-a")
    old.create_tournament(
        TournamentRecord(id="t1", name="cup", game="muushig", config={},
                         status=TournamentStatus.RUNNING, created_at=1.0),
        [ScheduledMatch(tournament_id="t1", slot=0, players=["a"] * 5, seed="s:0")])
    assert old.claim_slot("t1", "node-a", 600.0) is not None
    old.create_match(match("was-playing"))
    old.close()  # the node dies holding a 10-minute lease
    with stores_at(db_location, "node-a", "node-b") as (store, other):
        async with serving(store):
            assert store.get_match("was-playing").status is MatchStatus.ABORTED
            lease = other.claim_slot("t1", "node-b", 30.0)
            assert lease is not None and lease.slot.slot == 0  # no 10 minutes to wait out


async def test_a_restarted_node_gives_back_its_hosted_bots_seats_at_once(db_location):
    old = open_store(db_location, node="node-a")
    assert old.claim_hosted_seat("hosted-bot", "node-a", 600.0)
    old.close()  # the node dies mid-match, the bot seated for 10 minutes
    with stores_at(db_location, "node-a", "node-b") as (store, other):
        assert not other.claim_hosted_seat("hosted-bot", "node-b", 90.0)
        async with serving(store):
            assert other.claim_hosted_seat("hosted-bot", "node-b", 90.0)  # no 10 minutes


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
        with stores_at(db_location, "node-k") as (store,):
            with pytest.raises(NodeNameTakenError):
                await _server(store).start()
            holder.send_signal(signal.SIGKILL)
            holder.wait(timeout=30)
            async with serving(store):  # no lease or heartbeat to wait out
                pass
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()


def test_a_name_whose_holder_is_ending_is_taken_once_it_ends(db_location):
    """A killed node's lock goes when the database notices its session is
    gone: on PostgreSQL that is the server process of the session exiting,
    a moment after the client died, and a node restarted at once (here: a
    holder that lets go half a second after the start began) must not be
    told its own name is in use."""
    from arena.storage.node_lock import claim_node, locks_for

    with stores_at(db_location, "node-k", "node-k") as (dying, starting):
        held = locks_for(dying)
        assert held.alone("node-k")
        letting_go = threading.Timer(0.5, held.close)
        letting_go.start()
        try:
            claim_node(starting)
        finally:
            letting_go.join()
