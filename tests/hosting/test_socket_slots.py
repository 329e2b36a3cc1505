"""One hosted bot cannot shut the others out of the arena's Unix socket."""

from __future__ import annotations

import asyncio
from pathlib import Path

from arena.hosting.builder import submit_and_build
from arena.hosting.run_socket import MAX_CONNECTIONS
from arena.hosting.versions import BuildStatus
from tests.hosting.conftest import SAYS_HELLO, Arena, needs_sandbox

pytestmark = needs_sandbox
ROOT = Path(__file__).resolve().parents[2]
HOG = SAYS_HELLO.encode() + b"""
import os, socket, sys, time
held = []
for _ in range(80):  # more than the arena allows from one address
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:  # each through the relay: one connection to the arena's socket each
        s.connect((os.environ["ARENA_HOST"], int(os.environ["ARENA_PORT"])))
        held.append(s)
    except OSError as e:
        print("refused", e, file=sys.stderr, flush=True)
print("holding", len(held), file=sys.stderr, flush=True)
time.sleep(3600)
"""


async def test_a_bot_holding_many_connections_does_not_lock_out_another(arena: Arena) -> None:
    for name, data in (("hog", HOG),
                       ("good", (ROOT / "sample_bots" / "python_random" / "bot.py").read_bytes())):
        assert (await submit_and_build(arena.versions, name, data, "bot.py")).status \
            is BuildStatus.READY
    hog = await arena.hosted.start("hog")
    for _ in range(200):
        await asyncio.sleep(0.05)
        if b"holding" in hog.stderr_path.read_bytes() and hog.socket.slots.refused > 0:
            break  # the arena has accepted (and refused) what the hog queued
    assert hog.socket.slots.open <= MAX_CONNECTIONS and hog.socket.slots.refused > 0
    try:
        outcome = await arena.play("good")
        match = arena.store.get_match(outcome.match_id)
        assert outcome.aborted is None
        assert not match.faults[match.players.index("good")].autopilot
    finally:
        await arena.hosted.stop("hog")
