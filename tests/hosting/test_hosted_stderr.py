"""A hosted bot's saved stderr runs to the end of its match: the run is not
killed the moment the result is stored, but told it may leave (it plays one
match: ARENA_MAX_MATCHES=1, so the server says bye after match_end) and
given a moment to do so; what it writes on match_end is kept."""

from __future__ import annotations

from arena.hosting.builder import submit_and_build
from arena.hosting.ladder import Ladder, LadderSettings
from arena.hosting.versions import BuildStatus
from tests.hosting.conftest import Arena, needs_sandbox

pytestmark = needs_sandbox

# A bot that reports each match's end on stderr; like any C bot without a
# SIGTERM handler, it dies at once if it is killed.
BOT = b"""
import os, signal, sys
from protocol.sdk import run_bot

signal.signal(signal.SIGTERM, signal.SIG_DFL)
print("max_matches", os.environ.get("ARENA_MAX_MATCHES"), file=sys.stderr)

def play(phase, legal, state):
    return legal[0]

def ended(info, message):
    print("saw match_end of", info.match, file=sys.stderr)

run_bot(play, on_match_end=ended)
print("left after bye", file=sys.stderr)
"""


async def test_a_hosted_bots_stderr_is_kept_past_match_end(arena: Arena) -> None:
    for name in ("alpha", "beta"):
        version = await submit_and_build(arena.versions, name, BOT, "bot.py")
        assert version.status is BuildStatus.READY, arena.versions.build_log(name, 1)
    await arena.validate("alpha", "beta")  # the ladder seats a version once it passed
    ladder = Ladder(arena.server, arena.hosted,
                    settings=LadderSettings(interval_s=0.05, max_tables=1, claim_timeout_s=15))
    task = ladder.start_one()
    assert task is not None
    match_id = await task
    assert match_id is not None
    for name in ("alpha", "beta"):
        text = (arena.versions.stderr(name, 1, match_id) or b"").decode()
        assert "max_matches 1" in text, text
        assert f"saw match_end of {match_id}" in text, text
        assert "left after bye" in text, text
