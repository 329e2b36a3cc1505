"""Submitted bots build in the sandbox and play full matches; hostile ones are contained."""

from __future__ import annotations

import io
import shutil
import tarfile
from pathlib import Path

import pytest

from arena.hosting.builder import submit_and_build
from arena.hosting.ladder import Ladder, LadderSettings
from arena.hosting.versions import BuildStatus
from arena.server.table import TimeLimits
from tests.hosting.conftest import Arena, needs_sandbox

pytestmark = needs_sandbox

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_bots"


def tar_of(directory: Path, *, skip: tuple[str, ...] = ()) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for path in sorted(directory.rglob("*")):
            rel = path.relative_to(directory)
            if any(part in skip for part in rel.parts) or path.is_symlink():
                continue
            archive.add(path, arcname=f"bot/{rel}", recursive=False)
    return buffer.getvalue()


async def test_a_python_bot_builds_and_plays_a_full_match(arena: Arena) -> None:
    data = (SAMPLES / "python_heuristic" / "bot.py").read_bytes()
    version = await submit_and_build(arena.versions, "pybot", data, "bot.py")
    assert version.status is BuildStatus.READY, arena.versions.build_log("pybot", 1)
    outcome = await arena.play("pybot")
    assert outcome.aborted is None and outcome.result is not None
    match = arena.store.get_match(outcome.match_id)
    seat = match.players.index("pybot")
    assert match.faults[seat].timeouts == 0 and not match.faults[seat].autopilot


async def test_a_node_bot_with_vendored_modules_builds_and_plays(arena: Arena) -> None:
    if shutil.which("node") is None:
        pytest.skip("Node.js is not installed")
    data = tar_of(SAMPLES / "js_msgpack")
    version = await submit_and_build(arena.versions, "jsbot", data, "jsbot.tar.gz")
    assert version.status is BuildStatus.READY, arena.versions.build_log("jsbot", 1)
    assert version.lang == "node"
    outcome = await arena.play("jsbot")
    match = arena.store.get_match(outcome.match_id)
    assert outcome.aborted is None
    assert not match.faults[match.players.index("jsbot")].autopilot


async def test_a_c_bot_is_compiled_and_plays(arena: Arena) -> None:
    data = tar_of(SAMPLES / "c_jsonl", skip=("bot",))
    version = await submit_and_build(arena.versions, "cbot", data, "cbot.tar.gz")
    assert version.status is BuildStatus.READY, arena.versions.build_log("cbot", 1)
    assert (arena.versions.local_dir(version) / "app" / "bot").is_file()
    outcome = await arena.play("cbot")
    match = arena.store.get_match(outcome.match_id)
    assert outcome.aborted is None
    assert not match.faults[match.players.index("cbot")].autopilot


async def test_a_build_that_fails_says_why(arena: Arena) -> None:
    version = await submit_and_build(arena.versions, "broken", b"int main( {", "main.c")
    assert version.status is BuildStatus.FAILED
    assert "exited with code" in (version.reason or "")
    assert "error" in arena.versions.build_log("broken", 1)


async def test_a_refused_archive_is_a_failed_version(arena: Arena) -> None:
    version = await submit_and_build(arena.versions, "sneaky", b"PK\x03\x04junk", "x.zip")
    assert version.status is BuildStatus.FAILED and "zip" in (version.reason or "")


HOSTILE = '''
import os, socket, sys, threading
from protocol.sdk import run_bot

def attack():
    for target in [("127.0.0.1", 8080), ("127.0.0.1", 7001)]:
        try:
            socket.create_connection(target, timeout=1); print("reached", target, file=sys.stderr)
        except OSError as exc:
            print("refused", target, exc.errno, file=sys.stderr)
    try:
        open("/bot/planted", "w").write("x")
    except OSError:
        print("read-only /bot", file=sys.stderr)

def play(phase, legal, state):
    while True:  # never answers: the arena's deadline and autopilot take over
        pass

attack()
run_bot(play)
'''


async def test_a_hostile_bot_is_contained_and_recorded_as_a_fault(arena: Arena) -> None:
    version = await submit_and_build(arena.versions, "hostile", HOSTILE.encode(), "bot.py")
    assert version.status is BuildStatus.READY
    outcome = await arena.play("hostile", TimeLimits(decision_ms=200, bank_ms=0))
    match = arena.store.get_match(outcome.match_id)
    faults = match.faults[match.players.index("hostile")]
    assert faults.timeouts >= 1 and faults.autopilot
    text = (arena.versions.stderr("hostile", 1, outcome.match_id) or b"").decode()
    assert "reached" not in text and "refused" in text and "read-only /bot" in text
    # The arena is unaffected: a well-behaved bot is served at once.
    good = await submit_and_build(arena.versions, "good", (SAMPLES / "python_random" / "bot.py").read_bytes(),
                                  "bot.py")
    assert good.status is BuildStatus.READY
    outcome = await arena.play("good")
    assert outcome.aborted is None


async def test_the_ladder_keeps_hosted_bots_playing(arena: Arena) -> None:
    for name in ("alpha", "beta"):
        data = (SAMPLES / "python_random" / "bot.py").read_bytes()
        assert (await submit_and_build(arena.versions, name, data, "bot.py")).status is BuildStatus.READY
    await arena.validate("alpha", "beta")
    ladder = Ladder(arena.server, arena.hosted,
                    settings=LadderSettings(interval_s=0.05, max_tables=1, claim_timeout_s=15))
    task = ladder.start_one()
    assert task is not None
    match_id = await task
    assert match_id is not None
    match = arena.store.get_match(match_id)
    assert {"alpha", "beta"} <= set(match.players)
    assert match_id in arena.versions.get("alpha", 1).matches
    assert arena.versions.stderr("alpha", 1, match_id) is not None


async def test_a_hosted_bot_of_the_second_game_plays_its_own_ladder_table(arena: Arena,
                                                                         tmp_path: Path) -> None:
    app = tmp_path / "thirteen"
    app.mkdir()
    shutil.copy(SAMPLES / "python_thirteen" / "bot.py", app / "bot.py")
    (app / "arena-bot.toml").write_text('game = "thirteen"\n')
    version = await submit_and_build(arena.versions, "arranger", tar_of(app), "bot.tar.gz")
    assert version.status is BuildStatus.READY and version.game == "thirteen"
    data = (SAMPLES / "python_random" / "bot.py").read_bytes()
    assert (await submit_and_build(arena.versions, "tricks", data, "bot.py")).game == "muushig"
    await arena.validate("arranger", "tricks")
    ladder = Ladder(arena.server, arena.hosted,
                    settings=LadderSettings(interval_s=0.05, max_tables=2, claim_timeout_s=15,
                                            placement_matches=0))
    ids = []
    for _ in range(2):  # each table plays one game
        task = ladder.start_one()
        assert task is not None
        ids.append(task)
    games = {}
    for task in ids:
        match_id = await task
        assert match_id is not None
        match = arena.store.get_match(match_id)
        games[match.game] = match.players
    assert "arranger" in games["thirteen"] and len(games["thirteen"]) == 4
    assert "tricks" in games["muushig"] and len(games["muushig"]) == 5


async def test_a_remote_bot_that_opted_in_joins_the_hosted_ladder(arena: Arena) -> None:
    import asyncio
    import random

    from protocol.sdk import BotClient

    data = (SAMPLES / "python_random" / "bot.py").read_bytes()
    assert (await submit_and_build(arena.versions, "hosted-one", data, "bot.py")).status \
        is BuildStatus.READY
    rng = random.Random(3)
    fan = BotClient("127.0.0.1", arena.server.port, arena.server.local_token("remote-fan"),
                    "remote-fan", lambda phase, legal, state: rng.choice(legal),
                    reconnect=False, threaded=False, ladder=True)
    shy = BotClient("127.0.0.1", arena.server.port, arena.server.local_token("remote-shy"),
                    "remote-shy", lambda phase, legal, state: rng.choice(legal),
                    reconnect=False, threaded=False)
    tasks = [asyncio.create_task(bot.run()) for bot in (fan, shy)]
    try:
        for _ in range(100):
            if {"remote-fan", "remote-shy"} <= set(arena.server.idle_bots()):
                break
            await asyncio.sleep(0.05)
        assert arena.server.ladder_bots() == [("remote-fan", "muushig")]
        await arena.validate("hosted-one")
        ladder = Ladder(arena.server, arena.hosted,
                        settings=LadderSettings(interval_s=0.05, max_tables=1, claim_timeout_s=15))
        task = ladder.start_one()
        assert task is not None
        match = arena.store.get_match(await task)
        assert {"hosted-one", "remote-fan"} <= set(match.players)
        assert "remote-shy" not in match.players  # only bots that said "ladder": true
    finally:
        for bot in (fan, shy):
            await bot.stop()
        await asyncio.gather(*tasks, return_exceptions=True)
