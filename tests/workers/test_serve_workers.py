"""``arena serve --workers 2`` as real processes: both workers seat bots,
their live matches show on the parent's web, a killed worker is restarted
and its match aborted, every finished result is stored once, and SIGTERM
stops the whole tree."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

import pytest

from arena.storage import open_store
from arena.storage.base import MatchStatus

from .served import ARGS, Bots, Served, process_alive, tokens_for, until


@pytest.fixture(scope="module")
def arena(tmp_path_factory) -> Served:
    served = Served(tmp_path_factory.mktemp("workers") / "arena.db", *ARGS)
    yield served
    served.stop()
    served.kill() if served.proc.poll() is None else None


def _finished_by_node(db: Path) -> dict[str, set[str]]:
    store = open_store(db)
    try:
        by_node: dict[str, set[str]] = {}
        for match in store.finished_matches():
            by_node.setdefault(match.node, set()).add(match.id)
        return by_node
    finally:
        store.close()


@pytest.mark.timeout(90)
async def test_each_worker_seats_the_bots_its_tokens_go_to(arena):
    first, second = tokens_for(0, 5, prefix="a"), tokens_for(1, 5, prefix="a")
    bots = Bots(arena.port, first + second, max_matches=1)
    try:
        await bots.finish(timeout_s=60)
    finally:
        await bots.stop()
    store = open_store(arena.db)
    try:
        tables = {}
        for match_id in bots.results:
            record = store.get_match(match_id)
            tables[match_id] = (record.node, {p for p in record.players if p.startswith("b-")})
    finally:
        store.close()
    # One table in each worker, each with the five bots its tokens route to.
    assert sorted(tables.values(), key=lambda t: t[0]) == [
        (arena.worker_node(1), {f"b-{t}" for t in first}),
        (arena.worker_node(2), {f"b-{t}" for t in second})]
    handed = {w["worker"]: w["handed"] for w in arena.workers()}
    assert handed[1] >= 5 and handed[2] >= 5, arena.workers()


@pytest.mark.timeout(90)
def _listening_tcp_ports(pid: int) -> set[int]:
    """The TCP ports process ``pid`` listens on (its sockets in /proc/net/tcp*)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # LISTEN
                ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


def test_only_the_parent_listens_for_bots(arena):
    """A worker plays only bots the parent hands over: it opens no port."""
    assert arena.port in _listening_tcp_ports(arena.proc.pid)
    for worker in arena.workers():
        assert _listening_tcp_ports(worker["pid"]) == set(), worker


async def test_a_workers_live_match_shows_on_the_parents_web(arena):
    tokens = tokens_for(0, 5, prefix="live") + tokens_for(1, 5, prefix="live")
    bots = Bots(arena.port, tokens, delay_s=0.05)
    ours = {f"b-{t}" for t in tokens}
    try:
        def both_live():
            # This test's matches (an earlier test's may be ending meanwhile).
            live = [m for m in arena.live() if ours & set(m["players"])]
            nodes = {m.get("node") for m in live if m["events_count"] > 0}
            return live if {arena.worker_node(1), arena.worker_node(2)} <= nodes else None

        live = await until(both_live, what="a live match of each worker on the parent")
        match = next(m for m in live if m["node"] == arena.worker_node(1))
        assert {p for p in match["players"] if p.startswith("b-")} == {
            f"b-{t}" for t in tokens_for(0, 5, prefix="live")}
        events = arena.get(f"/api/matches/{match['id']}/events")
        assert events["live"] and events["total"] > 0  # the public log, from the worker
        assert arena.health()["live_matches"] >= 2
    finally:
        await bots.stop()


@pytest.mark.timeout(120)
async def test_every_finished_result_of_both_workers_is_stored_once(arena):
    tokens = tokens_for(0, 5, prefix="once") + tokens_for(1, 5, prefix="once")
    bots = Bots(arena.port, tokens, max_matches=3)
    try:
        await bots.finish(timeout_s=90)
    finally:
        await bots.stop()
    told = {m for m, result in bots.results.items() if result and "aborted" not in result}
    names = {f"b-{t}" for t in tokens}
    store = open_store(arena.db)
    try:
        stored = [m for m in store.finished_matches() if names & set(m.players)]
        nodes = {store.get_match(m.id).node for m in stored}
    finally:
        store.close()
    assert len(told) == 6  # three matches at each worker's table
    assert sorted(m.id for m in stored) == sorted(told)  # each once, none missing
    assert nodes == {arena.worker_node(1), arena.worker_node(2)}
    # The parent's metrics sum the workers' (reported every half second).
    in_store = sum(len(ids) for ids in _finished_by_node(arena.db).values())
    await until(lambda: arena.health()["metrics"]["matches_finished_total"] == in_store,
                timeout_s=5, what="the finished matches counted in the parent's metrics")


@pytest.mark.timeout(120)
async def test_a_killed_worker_is_restarted_and_its_match_aborted(served):
    arena = served(*ARGS)
    doomed, kept = tokens_for(0, 5, prefix="k"), tokens_for(1, 5, prefix="k")
    bots = Bots(arena.port, doomed + kept, delay_s=0.05)
    try:
        def live_on_both():
            live = {m.get("node"): m["id"] for m in arena.live()}
            return live if {arena.worker_node(1), arena.worker_node(2)} <= live.keys() else None

        live = await until(live_on_both, what="a live match on each worker")
        victim = next(w for w in arena.workers() if w["worker"] == 1)
        os.kill(victim["pid"], signal.SIGKILL)

        def restarted():
            for w in arena.workers():
                if w["worker"] == 1 and w["pid"] != victim["pid"]:
                    return w
            return None

        again = await until(restarted, what="worker 1 restarted")
        assert again["restarts"] == 1
        store = open_store(arena.db)
        try:
            cut = live[arena.worker_node(1)]
            record = await until(lambda: (r := store.get_match(cut)).status
                                 is MatchStatus.ABORTED and r, what="the cut match aborted")
            assert record.abort_reason == "server restarted"
            assert record.result is None  # never counted
            # The other worker's match was not touched.
            assert store.get_match(live[arena.worker_node(2)]).status is not MatchStatus.ABORTED
        finally:
            store.close()
        assert live[arena.worker_node(1)] not in {m["id"] for m in arena.live()}
    finally:
        await bots.stop()


@pytest.mark.timeout(60)
async def test_sigterm_stops_the_workers_and_aborts_their_matches_cleanly(served):
    arena = served(*ARGS)
    bots = Bots(arena.port, tokens_for(0, 5, prefix="t") + tokens_for(1, 5, prefix="t"),
                delay_s=0.05)
    try:
        await until(lambda: len(arena.live()) >= 2, what="a match on each worker")
        pids = [w["pid"] for w in arena.workers()]
        assert len(pids) == 2 and all(process_alive(pid) for pid in pids)
        assert await asyncio.to_thread(arena.stop) == 0
    finally:
        await bots.stop()
    assert not any(process_alive(pid) for pid in pids)
    store = open_store(arena.db)
    try:
        assert store.count_matches(status=MatchStatus.RUNNING) == 0
        aborted = store.list_matches(status=MatchStatus.ABORTED)
        assert {m.node for m in aborted} == {arena.worker_node(1), arena.worker_node(2)}
        assert {store.get_match(m.id).abort_reason for m in aborted} == {"server shutting down"}
    finally:
        store.close()


@pytest.mark.timeout(60)
async def test_a_ctrl_c_on_the_process_group_stops_the_whole_tree_in_order(served):
    arena = served(*ARGS)
    pids = [w["pid"] for w in arena.workers()]
    os.killpg(arena.proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
    assert await asyncio.to_thread(arena.proc.wait, 30) == 0
    await until(lambda: not any(process_alive(pid) for pid in pids), timeout_s=10,
                what="the workers gone")


@pytest.mark.timeout(60)
async def test_workers_do_not_outlive_a_killed_parent(served):
    arena = served(*ARGS)
    bots = Bots(arena.port, tokens_for(0, 5, prefix="o") + tokens_for(1, 5, prefix="o"),
                delay_s=0.05)
    try:
        await until(lambda: len(arena.live()) >= 2, what="a match on each worker")
        pids = [w["pid"] for w in arena.workers()]
        os.kill(arena.proc.pid, signal.SIGKILL)  # the parent alone
        await until(lambda: not any(process_alive(pid) for pid in pids), timeout_s=20,
                    what="the workers stopped by themselves")
    finally:
        await bots.stop()
    store = open_store(arena.db)
    try:  # they stopped cleanly: their matches aborted, none left running
        assert store.count_matches(status=MatchStatus.RUNNING) == 0
    finally:
        store.close()
