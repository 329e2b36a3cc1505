"""Bots the arena starts: what they are given, where their output goes, how
they end, and what happens when they cannot play."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.storage.base import MatchStatus
from arena.storage.sqlite import SqliteStore
from tests.timing import MS
from tests.tournament_run.helpers import ROOT, play, sample_entrant, write_config

ENV_BOT = """
import os, sys
sys.stderr.write("env " + " ".join(sorted(os.environ)) + "\\n")
sys.stderr.write("cwd " + os.getcwd() + "\\n")
sys.stderr.write("stdin " + repr(sys.stdin.read()) + "\\n")
sys.stderr.flush()
sys.path.insert(0, {root!r})
from protocol.sdk import run_bot
def play(phase, legal, state):
    sys.stderr.write("deciding " + phase + "\\n")
    return legal[0]
run_bot(play)
"""


def env_bot(folder: Path) -> Path:
    script = folder / "envbot.py"
    script.write_text(ENV_BOT.format(root=str(ROOT)))
    return script


def arena_cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "arena.cli", *args]


def test_a_missing_entrant_command_stops_the_run_before_any_match_with_one_line(tmp_path):
    path = write_config(tmp_path, sample_entrant("fine")
                        + '[[entrant]]\nname = "ghost"\ncommand = ["./no-such-bot", "-v"]\n')
    db = tmp_path / "a.db"
    proc = subprocess.run(arena_cli("tournament", str(path), "--db", str(db), "--port", "0",
                                    "--no-http"), capture_output=True, text=True, timeout=60,
                          cwd=ROOT)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if "ghost" in line]
    assert len(lines) == 1 and "no-such-bot" in lines[0]
    if db.exists():
        store = SqliteStore(db)
        assert store.count_matches() == 0
        store.close()


async def test_an_entrant_that_always_exits_is_played_by_autopilot_and_the_tournament_ends(
        tmp_path):
    entrants = (sample_entrant("fine")
                + f'[[entrant]]\nname = "quitter"\ncommand = ["{sys.executable}", "-c", '
                '"import sys; sys.exit(3)"]\n')
    path = write_config(tmp_path, entrants)
    # Ends within a bounded wait: the quitter's seats are not waited for.
    store, tid, complete = await asyncio.wait_for(play(path, tmp_path / "a.db"), 60_000 * MS)
    assert complete
    for slot in store.get_schedule(tid):
        match = store.get_match(slot.match_id)
        assert match.status is MatchStatus.FINISHED
        fault = match.faults[match.players.index("quitter")]
        assert fault.autopilot and fault.disconnects >= 1
    store.close()


async def test_a_local_bot_gets_only_the_documented_environment_and_no_stdin(
        tmp_path, monkeypatch):
    monkeypatch.setenv("ARENA_ADMIN_TOKEN", "do-not-pass-me")
    monkeypatch.setenv("SOME_PRIVATE_SETTING", "1")
    script = env_bot(tmp_path)
    (tmp_path / "work").mkdir()
    path = write_config(tmp_path, f'[[entrant]]\nname = "envbot"\ncommand = ["python", '
                        f'"{script}"]\ncwd = "work"\n', extra="duplicate = false")
    store, tid, _ = await play(path, tmp_path / "a.db")
    from arena.server.local_bots import bot_log_path

    (slot,) = store.get_schedule(tid)
    logs = tmp_path / "bot-logs"
    text = bot_log_path(logs, "envbot", "lobby").read_text()
    env_line = next(line for line in text.splitlines() if line.startswith("env "))
    names = set(env_line.split()[1:])
    assert {"ARENA_HOST", "ARENA_PORT", "ARENA_TOKEN", "ARENA_NAME"} <= names
    assert "ARENA_ADMIN_TOKEN" not in names and "SOME_PRIVATE_SETTING" not in names
    assert names <= {"ARENA_HOST", "ARENA_PORT", "ARENA_TOKEN", "ARENA_NAME", "PATH", "HOME",
                     "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "PYTHONPATH",
                     "PYTHONUNBUFFERED"}
    assert f"cwd {tmp_path / 'work'}" in text
    assert "stdin ''" in text
    store.close()


async def test_a_local_bots_stderr_is_kept_per_match_and_shown_by_arena_logs(tmp_path):
    script = env_bot(tmp_path)
    path = write_config(tmp_path, f'[[entrant]]\nname = "envbot"\ncommand = ["python", '
                        f'"{script}"]\n')
    db = tmp_path / "a.db"
    store, tid, _ = await play(path, db)
    from arena.server.local_bots import bot_log_path

    schedule = store.get_schedule(tid)
    for slot in schedule:
        log_file = bot_log_path(tmp_path / "bot-logs", "envbot", slot.match_id)
        assert "deciding " in log_file.read_text()
    one = schedule[1].match_id
    proc = subprocess.run(arena_cli("logs", "envbot", one, "--db", str(db)),
                          capture_output=True, text=True, timeout=30, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert "deciding " in proc.stdout
    listing = subprocess.run(arena_cli("logs", "envbot", "--db", str(db)),
                             capture_output=True, text=True, timeout=30, cwd=ROOT)
    assert all(slot.match_id in listing.stdout for slot in schedule)
    store.close()


def _pids_of(name: str) -> list[int]:
    """Processes whose environment names this local bot."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            env = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if f"ARENA_NAME={name}".encode() in env:
            found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


SPAWNER_BOT = """
import subprocess, sys
sys.path.insert(0, {root!r})
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])  # a helper it forgets
from protocol.sdk import run_bot
run_bot(lambda phase, legal, state: legal[0])
"""


def _start_arena(path: Path, db: Path, log: Path) -> subprocess.Popen:
    # Its log is kept, and a SIGABRT makes it print every thread's stack:
    # an arena that does not stop says where it stands.
    with log.open("ab") as err:
        return subprocess.Popen(arena_cli("tournament", str(path), "--db", str(db), "--port",
                                          "0", "--no-http"), cwd=ROOT,
                                stdout=subprocess.DEVNULL, stderr=err,
                                env={**os.environ, "PYTHONFAULTHANDLER": "1"})


def _stopped(arena: subprocess.Popen, log: Path, timeout_s: float) -> None:
    try:
        arena.wait(timeout_s)
    except subprocess.TimeoutExpired:
        arena.send_signal(signal.SIGABRT)
        arena.wait()
        raise AssertionError(f"the arena did not stop within {timeout_s:g} s of SIGTERM; its "
                             f"log:\n{log.read_text(errors='replace')[-6000:]}") from None


def _wait_for(predicate, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def test_sigkill_of_the_arena_takes_its_bots_with_it_and_resume_cleans_up(tmp_path):
    tag = f"orphan{os.getpid()}"
    script = tmp_path / "spawner.py"
    script.write_text(SPAWNER_BOT.format(root=str(ROOT)))
    path = write_config(tmp_path, f'[[entrant]]\nname = "{tag}"\ncommand = ["python", '
                        f'"{script}"]\n' + sample_entrant(tag + "b"))
    db = tmp_path / "a.db"
    arena = _start_arena(path, db, tmp_path / "first.log")
    leftovers: list[int] = []
    try:
        assert _wait_for(lambda: len(_pids_of(tag)) >= 2 and _pids_of(tag + "b"), 30)
        bots = _pids_of(tag) + _pids_of(tag + "b")
        arena.send_signal(signal.SIGKILL)  # the arena alone, not its process group
        arena.wait()
        # Every bot the arena started directly dies with it.
        assert _wait_for(lambda: not any(_alive(p) for p in _pids_of(tag + "b")), 5)
        direct = [p for p in bots if _alive(p) and Path(f"/proc/{p}/cmdline").read_bytes()
                  .endswith(b"spawner.py\0")]
        assert _wait_for(lambda: not any(_alive(p) for p in direct), 5)
        leftovers = [p for p in _pids_of(tag) if _alive(p)]  # the helper it forgot
        again = _start_arena(path, db, tmp_path / "again.log")  # resume
        try:
            assert _wait_for(lambda: not any(_alive(p) for p in leftovers), 15)
        finally:
            again.send_signal(signal.SIGTERM)
            _stopped(again, tmp_path / "again.log", 30)
    finally:
        if arena.poll() is None:
            arena.kill()
        for pid in _pids_of(tag) + _pids_of(tag + "b"):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass



# A bot whose helper leaves its process group (setsid, a daemon) and keeps
# the bot's output pipe open: the bot's end is not its output's end.
ESCAPED_HELPER_BOT = """
import subprocess, sys, time
helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                          start_new_session=True)
print("helper", helper.pid, flush=True)
time.sleep(float(sys.argv[1]))
sys.exit(3)
"""


async def _helper_of(bot) -> int:
    async with asyncio.timeout(30):
        while not any(line.startswith("helper ") for line in bot.recent_output):
            await asyncio.sleep(0.02)
    return int(next(line for line in bot.recent_output if line.startswith("helper ")).split()[1])


async def _end(bot, helpers: list[int]) -> None:
    for pid in helpers:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    bot._wanted = False
    if bot.process is not None and bot.process.returncode is None:
        bot.process.kill()
    if bot._watcher is not None:
        bot._watcher.cancel()
        await asyncio.gather(bot._watcher, return_exceptions=True)


async def test_a_bot_whose_helper_keeps_its_output_open_still_stops(tmp_path):
    """Before, the stop waited for the bot's output to close, which its
    escaped helper never does: the arena hung at its end for good."""
    from arena.server.local_bots import LocalBot

    bot = LocalBot(name="escaper", command=[sys.executable, "-c", ESCAPED_HELPER_BOT, "60"])
    await bot.start("127.0.0.1", 9, "token")
    helpers: list[int] = []
    try:
        helpers.append(await _helper_of(bot))
        async with asyncio.timeout(20):  # the grace, then SIGKILL: well inside
            await bot.stop(grace_s=0.5)
        assert bot.process is not None and bot.process.returncode is not None
    finally:
        await _end(bot, helpers)


async def test_a_bot_whose_helper_keeps_its_output_open_is_restarted_when_it_exits(tmp_path):
    """Its exit is what counts, not its output's end (before, the crash
    went unnoticed while the helper lived, and the bot never came back)."""
    from arena.server.local_bots import LocalBot

    bot = LocalBot(name="escaper", command=[sys.executable, "-c", ESCAPED_HELPER_BOT, "0.2"])
    await bot.start("127.0.0.1", 9, "token")
    helpers: list[int] = []
    try:
        first = bot.process
        helpers.append(await _helper_of(bot))
        async with asyncio.timeout(30):
            while bot.crashes == 0:
                await asyncio.sleep(0.02)
        assert bot.last_exit_code == 3
        async with asyncio.timeout(30):
            while bot.process is first:
                await asyncio.sleep(0.02)
        async with asyncio.timeout(30):  # the new process wrote its own line
            while (second := await _helper_of(bot)) == helpers[0]:
                await asyncio.sleep(0.02)
        helpers.append(second)
    finally:
        await _end(bot, helpers)


async def test_a_line_written_in_pieces_is_kept_as_one_line(tmp_path):
    """Bots run unbuffered: a line may come in several reads. Before, each
    read's pieces were lines of their own in what an author is shown."""
    from arena.server.local_bots import LocalBot

    script = ("import os, time\n"
              "for piece in (b'hel', b'lo\\nwor', b'ld'):\n"
              "    os.write(1, piece)\n"
              "    time.sleep(0.3)\n"
              "time.sleep(60)\n")
    bot = LocalBot(name="pieces", command=[sys.executable, "-c", script])
    await bot.start("127.0.0.1", 9, "token")
    try:
        async with asyncio.timeout(30):
            while bot.recent_output != ["hello", "world"]:
                assert bot.recent_output in ([], ["hel"], ["hello", "wor"]), bot.recent_output
                await asyncio.sleep(0.01)
    finally:
        await _end(bot, [])


async def test_a_crash_just_before_the_stop_is_still_counted(tmp_path):
    """The tournament's last match ends and its bots are stopped: a bot that
    crashed a moment before, and whose exit its watcher had not seen yet,
    is counted all the same (before, the stop made it look stopped, and a
    crashed bot's log folder was not kept)."""
    from arena.server.local_bots import LocalBot

    bot = LocalBot(name="quitter", command=[
        sys.executable, "-c", "import sys; print('bye', flush=True); sys.exit(5)"])
    await bot.start("127.0.0.1", 9, "token")
    try:
        async with asyncio.timeout(30):
            while bot.process is None or bot.process.returncode is None:
                await asyncio.sleep(0.005)
        await bot.stop()  # at once: its watcher has not run since the exit
        assert (bot.crashes, bot.last_exit_code, bot.stderr_tail) == (1, 5, ["bye"])
    finally:
        await _end(bot, [])
