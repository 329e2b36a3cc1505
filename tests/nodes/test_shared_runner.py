"""The shared-queue runner in one process (SQLite): what a node does when
another node takes its slot over, or finishes it first."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from arena.storage import open_store
from arena.storage.base import MatchRecord, MatchStatus, SeatFaults
from arena.tournament.config import load_config
from arena.tournament.runner import TournamentError, create_or_load
from arena.tournament.shared import QueueSettings, SharedTournamentRunner
from tests.tournament_run.helpers import new_server

from .arenas import shared_node
from .nodes import ROOT, assert_each_slot_once, write_tournament


def _held_by(store, tid: str, node: str) -> list[int]:
    with store.db.tx() as db:
        rows = db.execute("SELECT slot FROM schedule WHERE tournament_id = ? AND lease_node = ?"
                          " AND match_id IS NULL", (tid, node)).fetchall()
    return [row["slot"] for row in rows]


async def _running_slot(store, tid: str, node: str) -> int:
    """The slot of a match node is playing right now."""
    deadline = time.time() + 30
    while time.time() < deadline:
        running = store.list_matches(tournament_id=tid, status=MatchStatus.RUNNING)
        held = _held_by(store, tid, node)
        if running and len(held) == 1:
            return held[0]
        await asyncio.sleep(0.01)
    raise AssertionError("no match started")


SLOW_BOT = """
import random
import time
from protocol.sdk import run_bot

def play(phase, legal, state):
    time.sleep(0.005)  # a match lasts longer than a lease renewal
    return random.choice(legal)

run_bot(play)
"""


async def _tournament(tmp_path: Path, lease_s: float):
    path = write_tournament(tmp_path, tables=1, name="runner")
    bot = tmp_path / "slow_bot.py"
    bot.write_text(SLOW_BOT)
    text = path.read_text()
    # One local bot (a real process, slow enough for a renewal to happen
    # mid-match), house bots in the other seats.
    text = text[:text.index('[[entrant]]\nname = "py-heuristic"')].replace("parallel = 2",
                                                                          "parallel = 1")
    text = text.replace(str(ROOT / "sample_bots" / "python_random" / "bot.py"), str(bot))
    path.write_text(text)
    node = await shared_node(tmp_path / "arena.db", load_config(path), "node-a", lease_s=lease_s)
    other = open_store(tmp_path / "arena.db", node="node-b")
    return node.store, other, node.server, node.runner, node.runner.record.id


@pytest.mark.timeout(60)
async def test_a_slot_taken_over_mid_match_is_abandoned_and_replayed(tmp_path):
    store, other, server, runner, tid = await _tournament(tmp_path, lease_s=0.6)
    try:
        play = asyncio.create_task(runner.run())
        slot = await _running_slot(other, tid, "node-a")
        with other.db.tx() as db:  # node-b's claim after node-a's lease "ran out"
            db.execute("UPDATE schedule SET lease_node = 'node-b', lease_until = ? WHERE "
                       "tournament_id = ? AND slot = ?", (time.time() + 1.0, tid, slot))
        assert await asyncio.wait_for(play, timeout=50)
    finally:
        await server.stop()
    try:
        assert_each_slot_once(other, tid)
        aborted = other.list_matches(tournament_id=tid, status=MatchStatus.ABORTED)
        assert len(aborted) == 1 and aborted[0].node == "node-a"
        # node-b never played it: once its lease ran out, node-a replayed it.
        assert slot in runner.takeovers and slot in runner.played
        assert [s.attempts for s in other.get_schedule(tid) if s.slot == slot] == [2]
    finally:
        other.close()
        store.close()


@pytest.mark.timeout(60)
async def test_a_slot_another_node_finished_first_counts_nothing_here(tmp_path):
    store, other, server, runner, tid = await _tournament(tmp_path, lease_s=30.0)
    try:
        play = asyncio.create_task(runner.run())
        slot = await _running_slot(other, tid, "node-a")
        scheduled = next(s for s in other.get_schedule(tid) if s.slot == slot)
        other.create_match(MatchRecord(
            id="node-b-match", game="muushig", players=scheduled.players, rules={},
            limits={}, status=MatchStatus.RUNNING, started_at=time.time(),
            tournament_id=tid, seed=scheduled.seed))
        other.finish_match("node-b-match", result={"stars": [1] * 5}, reveal=[],
                           faults=[SeatFaults()] * 5, latency_ms=[[]] * 5,
                           finished_at=time.time(), slot=(tid, slot))
        assert await asyncio.wait_for(play, timeout=50)
    finally:
        await server.stop()
    try:
        assert next(s for s in other.get_schedule(tid) if s.slot == slot).match_id == \
            "node-b-match"
        assert slot not in runner.played
        assert len(runner.played) == len(other.get_schedule(tid)) - 1
        mine = [m for m in other.list_matches(tournament_id=tid) if m.seed == scheduled.seed
                and m.node == "node-a" and m.status is not MatchStatus.FINISHED]
        assert mine and all(m.status is MatchStatus.ABORTED for m in mine)
        assert other.count_matches(tournament_id=tid, status=MatchStatus.RUNNING) == 0
    finally:
        other.close()
        store.close()


def test_a_joining_node_deals_from_the_kept_key_and_refuses_another(pg_url, tmp_path):
    from arena.tournament.runner import tournament_key

    config = load_config(write_tournament(tmp_path, tables=1))
    first, second, third = (open_store(pg_url, node=n) for n in ("n1", "n2", "n3"))
    key = bytes(range(32))
    try:
        record, created = create_or_load(first, config, secret=key)
        assert created
        joined, _ = create_or_load(second, config)  # the database keeps the key
        assert tournament_key(second, joined) == key
        with pytest.raises(TournamentError, match="--secret is not the deal key"):
            create_or_load(second, config, secret=bytes(32))
        joined, created = create_or_load(third, config, secret=key)
        assert not created and joined.id == record.id
    finally:
        for s in (first, second, third):
            s.close()


def test_until_separated_runs_on_one_node(tmp_path):
    path = write_tournament(tmp_path, tables=1)
    path.write_text(path.read_text().replace('house_bot = "heuristic"',
                                             'house_bot = "heuristic"\nuntil_separated = true'))
    store = open_store(tmp_path / "arena.db")
    try:
        config = load_config(path)
        record, _ = create_or_load(store, config)
        server = new_server(store)
        with pytest.raises(TournamentError, match="one node"):
            SharedTournamentRunner(server, config, record, queue=QueueSettings(node="n1"))
    finally:
        store.close()
