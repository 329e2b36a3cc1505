"""Hosted bots under ``arena serve --workers 2``: submitted as code, built
and run in the sandbox by the parent, and played on the parent's ladder
while the workers seat the bots that connect over the network."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from arena.storage import open_store
from arena.storage.base import MatchStatus
from tests.hosting.conftest import needs_sandbox

from .served import Bots, Served, tokens_for, until

pytestmark = needs_sandbox
ROOT = Path(__file__).resolve().parents[2]
BOT = ROOT / "sample_bots" / "python_random" / "bot.py"


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=120)


@pytest.mark.timeout(180)
async def test_hosted_bots_play_the_ladder_in_the_parent_beside_the_workers(tmp_path):
    db = tmp_path / "arena.db"
    for name in ("hosted-a", "hosted-b"):
        assert cli("bots", "add", name, "--db", str(db)).returncode == 0
        submitted = cli("bots", "submit", name, str(BOT), "--db", str(db))
        assert f"{name} v1: ready" in submitted.stdout, submitted.stderr
    arena = Served(db, "--any-token", "--house-wait", "0.3", "--rule", "max_hands=3",
                   "--hosted", "--ladder-interval", "0.2", "--ladder-tables", "1")
    lobby = Bots(arena.port, tokens_for(0, 5, prefix="h") + tokens_for(1, 5, prefix="h"),
                 max_matches=1)
    try:
        store = open_store(db)
        try:
            def ladder_matches() -> list:
                return [store.get_match(m.id) for m in store.list_matches(
                    status=MatchStatus.FINISHED, limit=1000)
                    if {"hosted-a", "hosted-b"} <= set(m.players)]
            await until(lambda: len(ladder_matches()) >= 2, timeout_s=120,
                        what="two ladder matches of the hosted bots")
            await lobby.finish(timeout_s=60)
            for match in ladder_matches():
                assert match.node is None  # the parent's table
                for seat, name in enumerate(match.players):
                    if name.startswith("hosted-"):  # played by the sandboxed bot itself
                        assert match.faults[seat].timeouts == 0
                        assert match.faults[seat].disconnects == 0
            by_node = {store.get_match(m).node for m in lobby.results}
            # the network's bots at the workers
            assert by_node == {arena.worker_node(1), arena.worker_node(2)}
        finally:
            store.close()
    finally:
        await lobby.stop()
        assert arena.stop() == 0, arena.log_tail()
