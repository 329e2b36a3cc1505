"""Real tournaments over TCP: sample bots, duplicate seating, kill and resume."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from arena.storage.base import MatchStatus, Store, TournamentStatus
from arena.storage.sqlite import SqliteStore
from arena.tournament.runner import standings_rows
from tests.tournament_run import helpers
from tests.tournament_run.helpers import ROOT, sample_entrant


def write_config(folder: Path, entrants: str, *, extra: str = "") -> Path:
    return helpers.write_config(folder, entrants, name="t", extra=extra)


async def run(path: Path, db: Path) -> tuple[Store, str, bool]:
    # The server's own decision limits as the config's (1000 ms, no bank).
    return await helpers.play(path, db, server_overrides={"db": str(db), "bank_ms": 0})


async def test_a_duplicate_tournament_of_sample_bots_in_several_languages(tmp_path):
    if shutil.which("node") is None or not (ROOT / "sample_bots/c_jsonl/bot").exists():
        pytest.skip("the JavaScript and C sample bots need node and a built C bot "
                    "(scripts/build-bots)")
    entrants = (sample_entrant("py-random", "python_random")
                + sample_entrant("py-heuristic", "python_heuristic")
                + f'[[entrant]]\nname = "js"\ncommand = ["node", "{ROOT}/sample_bots/js_msgpack/bot.js"]\n'
                + f'[[entrant]]\nname = "c"\ncommand = ["{ROOT}/sample_bots/c_jsonl/bot"]\n')
    path = write_config(tmp_path, entrants)
    store, tid, complete = await run(path, tmp_path / "a.db")
    assert complete
    assert store.get_tournament(tid).status is TournamentStatus.FINISHED
    schedule = store.get_schedule(tid)
    assert len(schedule) == 5  # one table of five, five rotations
    seats: dict[str, set[int]] = {}
    seeds = {slot.seed for slot in schedule}
    assert len(seeds) == 1  # every rotation replays the same decks
    for slot in schedule:
        match = store.get_match(slot.match_id)
        assert match.status is MatchStatus.FINISHED and match.tournament_id == tid
        assert match.players == slot.players
        for seat, bot in enumerate(match.players):
            seats.setdefault(bot, set()).add(seat)
    assert all(held == {0, 1, 2, 3, 4} for held in seats.values())  # every seat's cards once
    rows = standings_rows(store, tid)
    # The house seat is its entrant, as on the web and in --export.
    assert {row.bot for row in rows} == {"py-random", "py-heuristic", "js", "c",
                                         "house-heuristic"}
    assert all(row.matches == 5 for row in rows)
    assert sum(row.stars for row in rows) == 25
    # The duplicated deals really are the same: the first deck of every
    # rotation is identical.
    first_decks = {tuple(store.get_match(s.match_id).reveal[0]["deck"]) for s in schedule}
    assert len(first_decks) == 1
    store.close()


async def test_a_crashing_local_bot_is_restarted_and_its_faults_counted(tmp_path):
    crasher = tmp_path / "crasher.py"
    crasher.write_text(
        "import os, sys\n"
        "from protocol.sdk import run_bot\n"
        "count = 0\n"
        "def play(phase, legal, state):\n"
        "    global count\n"
        "    count += 1\n"
        "    if count == 30:\n"
        "        os._exit(3)\n"
        "    return legal[0]\n"
        "run_bot(play)\n")
    entrants = (sample_entrant("steady", "python_random")
                + f'[[entrant]]\nname = "crasher"\ncommand = ["python", "{crasher}"]\n')
    path = write_config(tmp_path, entrants, extra="duplicate = false")
    store, tid, complete = await run(path, tmp_path / "c.db")
    assert complete
    (slot,) = store.get_schedule(tid)
    match = store.get_match(slot.match_id)
    seat = match.players.index("crasher")
    assert match.faults[seat].disconnects >= 1
    store.close()


async def test_killed_tournament_resumes_without_losing_or_repeating_matches(tmp_path):
    entrants = (sample_entrant("a", "python_random") + sample_entrant("b", "python_heuristic")
                + sample_entrant("c", "python_random"))
    path = write_config(tmp_path, entrants)
    db = tmp_path / "k.db"
    cmd = [sys.executable, "-m", "arena.cli", "tournament", str(path), "--db", str(db),
           "--port", "0", "--no-http"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = await asyncio.create_subprocess_exec(*cmd, stdout=asyncio.subprocess.DEVNULL,
                                                stderr=asyncio.subprocess.DEVNULL, env=env,
                                                start_new_session=True)
    reader = SqliteStore(db) if db.exists() else None
    deadline = time.monotonic() + 90
    before: dict[int, str] = {}
    try:
        while time.monotonic() < deadline:
            await asyncio.sleep(0.05)
            if reader is None:
                if not db.exists():
                    continue
                reader = SqliteStore(db)
            tournaments = reader.list_tournaments()
            if not tournaments:
                continue
            tid = tournaments[0].id
            done = {s.slot: s.match_id for s in reader.get_schedule(tid) if s.match_id}
            running = reader.list_matches(status=MatchStatus.RUNNING)
            if len(done) >= 1 and running:
                before = done
                break
        assert before, "the tournament never reached a finished slot with a match running"
        os.killpg(proc.pid, signal.SIGKILL)  # the arena and the bots it started
        await proc.wait()
    finally:
        if proc.returncode is None:
            os.killpg(proc.pid, signal.SIGKILL)
            await proc.wait()

    again = await asyncio.create_subprocess_exec(*cmd, stdout=asyncio.subprocess.PIPE,
                                                 stderr=asyncio.subprocess.DEVNULL, env=env)
    out, _ = await asyncio.wait_for(again.communicate(), 120)
    assert again.returncode == 0, out.decode()
    store = SqliteStore(db)
    (tournament,) = store.list_tournaments()
    schedule = store.get_schedule(tournament.id)
    assert all(slot.match_id for slot in schedule)
    for slot, match_id in before.items():
        assert schedule[slot].match_id == match_id  # finished before the kill: kept
    finished = store.list_matches(tournament_id=tournament.id, status=MatchStatus.FINISHED,
                                  limit=1000)
    assert len(finished) == len(schedule)  # nothing counted twice
    assert Counter(s.match_id for s in schedule).most_common(1)[0][1] == 1
    assert store.list_matches(tournament_id=tournament.id, status=MatchStatus.ABORTED)
    rows = standings_rows(store, tournament.id)
    assert sum(row.matches for row in rows) == 5 * len(schedule)
    assert "a" in out.decode() and "stars" in out.decode()
    store.close()
    if reader is not None:
        reader.close()
