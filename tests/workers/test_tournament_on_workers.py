"""``arena tournament FILE --workers N``: the schedule played by N worker
processes, each a node of the tournament's shared slot queue with its own
copies of the entrants; every slot is still played exactly once."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Callable

import pytest

from arena.server.local_bots import LocalBot, LocalBots, launch_env, process_file
from arena.storage.base import MatchStatus, TournamentStatus
from arena.storage.sqlite import SqliteStore
from arena.tournament.verify import verify_tournament
from tests.tournament_run.helpers import ROOT, sample_entrant, write_config

SCHEDULE = '[schedule]\nkind = "balanced"\ntables = 2\nhouse_bot = "heuristic"\n'
RULES = 'duplicate = true\n[rules]\nmax_hands = 2\n'


def arena_cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "arena.cli", *args]


def cup(folder: Path, *, held: bool = False) -> Path:
    """Two entrants and house bots: one table's worth, so one process plays
    one match at a time and only the workers' own copies play in parallel.
    ``held``: w-random's copies hold their first decision until both
    workers' copies have reached theirs, so both workers surely play (the
    whole cup takes a few seconds, less than a loaded machine may take to
    start the second worker)."""
    random_bot = sample_entrant("w-random")
    if held:
        random_bot = (f'[[entrant]]\nname = "w-random"\ncommand = ["python", '
                      f'"{Path(__file__).with_name("rendezvous_bot.py")}", '
                      f'"{folder / "rendezvous"}", "2"]\n')
    return write_config(folder, random_bot + sample_entrant("w-strong", "python_heuristic"),
                        extra=RULES + SCHEDULE, name="workers cup",
                        decision_ms=90_000 if held else 1000)


def run(path: Path, db: "Path | str", *extra: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(arena_cli("tournament", str(path), "--db", str(db), "--port", "0",
                                    "--no-http", "--no-keep-serving", *extra),
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT)


# Under pytest-xdist each test process has its own name, which the arena
# and its workers inherit: a test counts (and kills) only its own workers,
# not those of a test running beside it.
_OURS = f"PYTEST_XDIST_WORKER={os.environ['PYTEST_XDIST_WORKER']}".encode() \
    if "PYTEST_XDIST_WORKER" in os.environ else None


def worker_pids() -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if b"arena.tournament.worker" not in (entry / "cmdline").read_bytes():
                    continue
                if _OURS is not None and _OURS not in (entry / "environ").read_bytes().split(b"\0"):
                    continue
                found.append(int(entry.name))
            except OSError:
                continue
    return found


def wait_for_a_running_match(db: Path, arena: subprocess.Popen, err: list[str],
                             timeout_s: float = 90) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if arena.poll() is not None:
            raise AssertionError(f"the arena ended (code {arena.returncode}) before a match "
                                 f"ran:\n{''.join(err)[-3000:]}")
        if db.exists():
            store = SqliteStore(db)
            try:
                if store.list_matches(status=MatchStatus.RUNNING, limit=10):
                    return
            finally:
                store.close()
        time.sleep(0.05)
    raise AssertionError(f"no match ran within {timeout_s:g} s:\n{''.join(err)[-3000:]}")


def run_until_a_match_runs(path: Path, db: Path, act: Callable[[subprocess.Popen], None],
                           timeout: float, *extra: str) -> tuple[subprocess.Popen, str]:
    """``arena tournament --workers 2`` of ``path``; ``act`` on it once a
    match runs, then wait for it to end (killed if it outlives ``timeout``).
    Returns the ended process and its stderr."""
    arena = subprocess.Popen(arena_cli("tournament", str(path), "--db", str(db), "--port", "0",
                                       "--no-http", "--no-keep-serving", "--workers", "2", *extra),
                             cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    # Its log is read all along: a pipe nobody reads would stop the arena
    # at its 64 KiB-th byte.
    err: list[str] = []
    reader = threading.Thread(target=lambda: err.extend(arena.stderr), daemon=True)  # type: ignore[arg-type]
    reader.start()
    try:
        wait_for_a_running_match(db, arena, err)
        act(arena)
        arena.wait(timeout=timeout)
    finally:
        if arena.poll() is None:
            arena.kill()
            arena.wait()
        reader.join(timeout=10)
    return arena, "".join(err)


def check_played_once(db: Path) -> tuple[str, dict[str | None, int]]:
    store = SqliteStore(db)
    try:
        (record,) = store.list_tournaments()
        assert record.status is TournamentStatus.FINISHED
        schedule = store.get_schedule(record.id)
        assert schedule and all(slot.match_id is not None for slot in schedule)
        finished = store.finished_matches(tournament_id=record.id)
        assert sorted(m.id for m in finished) == sorted(s.match_id for s in schedule)
        assert store.count_matches(tournament_id=record.id, status=MatchStatus.RUNNING) == 0
        nodes: dict[str | None, int] = {}
        for match in finished:
            node = store.get_match(match.id).node
            nodes[node] = nodes.get(node, 0) + 1
        report = verify_tournament(store, record.id)
        assert report.ok, report
        return record.id, nodes
    finally:
        store.close()


@pytest.mark.timeout(180)
def test_two_workers_share_the_schedule_and_play_each_slot_once(tmp_path):
    done = run(cup(tmp_path, held=True), tmp_path / "cup.db", "--workers", "2")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    assert "deal key (revealed" in done.stdout and "w-strong" in done.stdout
    assert "fault:" not in done.stdout  # no worker killed the other's bots
    _, nodes = check_played_once(tmp_path / "cup.db")
    assert set(nodes) == {"arena-w1", "arena-w2"}, nodes  # both played
    assert not worker_pids()
    logs = tmp_path / "bot-logs"
    assert not list(logs.glob("*/process*"))  # every bot stopped, its record gone


def get_json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=5) as answer:
        return json.loads(answer.read())


@pytest.mark.timeout(180)
def test_the_parents_web_follows_the_workers_tables_live(tmp_path):
    arena = subprocess.Popen(arena_cli("tournament", str(cup(tmp_path, held=True)), "--db",
                                       str(tmp_path / "cup.db"), "--port", "0", "--http-port", "0",
                                       "--no-keep-serving", "--workers", "2"),
                             cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        first = arena.stdout.readline()  # "tournament ID: NAME — standings on URL"
        found = re.search(r"(http://[^/]+)/tournaments/(\S+)", first)
        assert found, first
        base, tid = found.groups()
        live_nodes: set[str] = set()
        progress: list[int] = []
        deadline = time.monotonic() + 60
        while arena.poll() is None and time.monotonic() < deadline and len(live_nodes) < 2:
            try:
                live = get_json(f"{base}/api/matches/live")["matches"]
                progress.append(get_json(f"{base}/api/tournaments/{tid}")["tournament"]
                                ["progress"]["done"])
            except OSError:
                break  # the tournament ended and the web with it
            live_nodes |= {m["node"] for m in live if m["tournament_id"] == tid}
            time.sleep(0.1)
        assert live_nodes == {"arena-w1", "arena-w2"}, live_nodes
        assert progress == sorted(progress), progress
        arena.communicate(timeout=120)
        assert arena.returncode == 0
    finally:
        if arena.poll() is None:
            arena.kill()
            arena.wait()


@pytest.mark.timeout(300)
def test_killed_workers_are_restarted_and_their_slots_played_again_once(tmp_path):
    path, db = cup(tmp_path), tmp_path / "cup.db"
    def kill_every_worker(arena: subprocess.Popen) -> None:
        victims = worker_pids()
        assert victims
        for pid in victims:  # every worker, so the running match is surely cut
            os.kill(pid, signal.SIGKILL)

    arena, err = run_until_a_match_runs(path, db, kill_every_worker, 180, "--lease", "3")
    assert arena.returncode == 0, err[-3000:]
    assert "worker_died" in err
    tid, _ = check_played_once(db)
    store = SqliteStore(db)
    try:  # the cut match stays aborted and counts for nothing; its slot was played again
        assert store.count_matches(tournament_id=tid, status=MatchStatus.ABORTED) >= 1
    finally:
        store.close()
    assert not worker_pids()


def test_remote_entrants_and_zero_workers_are_refused_before_anything_is_stored(tmp_path):
    path = write_config(tmp_path, sample_entrant("w-local")
                        + '[[entrant]]\nname = "w-far"\nremote = true\n', extra=SCHEDULE)
    refused = run(path, tmp_path / "a.db", "--workers", "2", timeout=60)
    assert refused.returncode == 2
    assert "--workers needs a command for every entrant; w-far" in refused.stderr
    assert "Traceback" not in refused.stderr
    zero = run(cup(tmp_path), tmp_path / "b.db", "--workers", "0", timeout=60)
    assert zero.returncode == 2 and "--workers must be between 1 and 64, got 0" in zero.stderr
    for name in ("a.db", "b.db"):
        if (tmp_path / name).exists():
            store = SqliteStore(tmp_path / name)
            assert store.list_tournaments() == [] and store.count_matches() == 0
            store.close()


SLEEPER = "import time; time.sleep(60)"


async def test_a_node_starting_its_bots_leaves_another_nodes_bots_alone(tmp_path):
    """Both workers of one tournament keep their bots' process records in the
    same folder; a worker starting up reaps only its own node's leftovers
    (before, the second worker killed the first one's bots)."""
    first = LocalBots(tmp_path, node="arena-w1")
    bot = LocalBot(name="sleepy", command=[sys.executable, "-c", SLEEPER])
    bot.log_dir, bot.node = tmp_path, "arena-w1"
    bot._env = launch_env("127.0.0.1", 9, "token", "sleepy")
    await bot._spawn()
    try:
        assert (tmp_path / "sleepy" / process_file("arena-w1")).is_file()
        LocalBots(tmp_path, node="arena-w2")  # the second worker starts
        await asyncio.sleep(0.2)
        assert bot.process.returncode is None, "the other node's bot was killed"
        LocalBots(tmp_path, node="arena-w1")  # the same node again: its leftovers go
        await asyncio.wait_for(bot.process.wait(), 5)
    finally:
        if bot.process.returncode is None:
            bot.process.kill()
            await bot.process.wait()
    del first


@pytest.mark.timeout(240)
def test_an_interrupted_run_resumes_on_workers_and_plays_each_slot_once(tmp_path):
    path, db = cup(tmp_path), tmp_path / "cup.db"
    def ctrl_c(arena: subprocess.Popen) -> None:
        arena.send_signal(signal.SIGINT)  # the parent stops its workers in order

    arena, err = run_until_a_match_runs(path, db, ctrl_c, 60)
    assert arena.returncode == 1, err[-3000:]
    assert "tournament interrupted; resume with: arena tournament resume" in err
    assert not worker_pids()
    store = SqliteStore(db)
    try:
        (record,) = store.list_tournaments()
        assert record.status is not TournamentStatus.FINISHED
        # The stopped workers gave their slots back: a resume need not wait
        # for the leases to run out (30 s by default).
        with store.db.read() as conn:
            leased = conn.execute("SELECT slot FROM schedule WHERE tournament_id = ? AND "
                                "match_id IS NULL AND lease_node IS NOT NULL",
                                (record.id,)).fetchall()
        assert leased == []
    finally:
        store.close()
    resumed = subprocess.run(arena_cli("tournament", "resume", record.id, "--db", str(db),
                                       "--port", "0", "--no-http", "--no-keep-serving",
                                       "--workers", "2"),
                             capture_output=True, text=True, timeout=180, cwd=ROOT)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    check_played_once(db)


@pytest.mark.timeout(180)
def test_workers_share_a_tournament_on_postgresql_with_the_parents_key(tmp_path, pg_url):
    """On PostgreSQL the deal key is kept in the parent's memory, not in a
    folder: the workers get it from the parent and deal from it."""
    done = run(cup(tmp_path), pg_url, "--workers", "2", "--node", "pg-node")
    assert done.returncode == 0, done.stderr[-3000:]
    from arena.storage import open_store

    store = open_store(pg_url)
    try:
        (record,) = store.list_tournaments()
        assert record.status is TournamentStatus.FINISHED
        nodes = {store.get_match(m.id).node
                 for m in store.finished_matches(tournament_id=record.id)}
        assert nodes == {"pg-node-w1", "pg-node-w2"}
        key = re.search(r"deal key \(revealed now that the tournament is over\): (\w+)",
                        done.stdout).group(1)
        assert verify_tournament(store, record.id, keyring=memory_keyring(record.id, key)).ok
    finally:
        store.close()


def memory_keyring(tid: str, key_hex: str):
    from arena.storage.deal_keys import DealKeyring

    keyring = DealKeyring(None)
    keyring.create(tid, bytes.fromhex(key_hex))
    return keyring
