"""Open mode under ``arena serve --workers 2``: the name of a bot the arena
starts itself (a hosted bot, run by the parent in its sandbox) is the
arena's in every process. A remote hello with that name and another token
is refused at a worker as at the parent, for the rest of the server's
start, also between the bot's runs (each run's token lives in the parent's
memory only while the run lives). House bots' names are refused by the
reserved ``house`` family rule in every process already."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from arena.storage import open_store
from tests.hosting.conftest import needs_sandbox
from tests.server.rawbot import RawBot

from .served import until

ROOT = Path(__file__).resolve().parents[2]
BOT = ROOT / "sample_bots" / "python_random" / "bot.py"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=120)


def _played(db: Path, bot: str) -> bool:
    store = open_store(db)
    try:
        return any(bot in m.players for m in store.list_matches(limit=1000))
    finally:
        store.close()


def _played_house(db: Path) -> str | None:
    """The name of a house bot seated in a stored match, if any."""
    store = open_store(db)
    try:
        return next((p for m in store.list_matches(limit=1000) for p in m.players
                     if p.startswith("house")), None)
    finally:
        store.close()


async def _hello(port: int, token: str, name: str,
                 people: bool) -> tuple[RawBot, dict[str, Any] | None]:
    bot = await RawBot().connect(port)
    message: dict[str, Any] = {"type": "hello", "protocol": 1, "token": token, "name": name}
    if people:  # a bot that opted in to people is the parent's; any other goes to a worker
        message["people"] = True
    await bot.send(message)
    return bot, await bot.recv(timeout=30)


@needs_sandbox
@pytest.mark.timeout(240)
async def test_a_hosted_bots_name_is_refused_to_a_remote_hello_in_every_process(served, tmp_path):
    db = tmp_path / "arena.db"
    # hosted-a said hello to an open server once: its row holds no token
    # (the store alone would let another token have the name).
    store = open_store(db)
    try:
        store.ensure_bot("hosted-a")
    finally:
        store.close()
    assert _cli("bots", "add", "hosted-b", "--db", str(db)).returncode == 0
    for name in ("hosted-a", "hosted-b"):
        submitted = _cli("bots", "submit", name, str(BOT), "--db", str(db))
        assert f"{name} v1: ready" in submitted.stdout, submitted.stderr
    arena = served("--any-token", "--house-wait", "0.3", "--rule", "max_hands=3",
                   "--hosted", "--ladder-interval", "0.2", "--ladder-tables", "1")
    await until(lambda: _played(db, "hosted-a"), 150, "a ladder match of hosted-a")
    for people in (False, True):  # at a worker, then at the parent
        bot, answer = await _hello(arena.port, "an-impostors-token", "hosted-a", people)
        try:
            assert answer is not None and answer["type"] == "error", (people, answer)
            assert answer["code"] == "auth_failed", answer
            assert "hosted-a" in answer["message"] and "arena starts" in answer["message"], answer
        finally:
            await bot.close()
    # The house bots the arena seats (ladder tables, people's tables) need no
    # record: their names' family is refused by every process's name rule.
    await until(lambda: _played_house(db), 60, "a match with a house bot")
    for people in (False, True):
        bot, answer = await _hello(arena.port, "an-impostors-token", _played_house(db), people)
        try:
            assert answer is not None and answer["code"] == "auth_failed", (people, answer)
            assert "reserved" in answer["message"] and "house" in answer["message"], answer
        finally:
            await bot.close()
    assert arena.stop() == 0, arena.log_tail()
