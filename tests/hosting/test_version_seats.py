"""A hosted bot's versions started under seat names (tournament entrants):
two versions of one bot run side by side, each says hello under its seat,
a version that is not ready does not start, and removing the bot stops
every run of it, whatever name it sits under."""

from __future__ import annotations

import asyncio

import pytest

from arena.hosting.builder import submit_and_build
from arena.hosting.errors import HostingError
from arena.hosting.versions import BuildStatus
from tests.hosting.conftest import Arena, needs_sandbox
from tests.tournament_run.helpers import ROOT

pytestmark = needs_sandbox

BOT = (ROOT / "sample_bots" / "python_random" / "bot.py").read_bytes()


async def _until(check, timeout_s: float = 60.0) -> None:
    async with asyncio.timeout(timeout_s):
        while not check():
            await asyncio.sleep(0.05)


async def test_two_versions_sit_side_by_side_and_removal_stops_both(arena: Arena) -> None:
    for _ in range(2):
        version = await submit_and_build(arena.versions, "mybot", BOT, "bot.py")
        assert version.status is BuildStatus.READY
    await arena.hosted.start_version("mybot", 1, "mybot.v1")
    await arena.hosted.start_version("mybot", 2, "mybot.v2")
    assert {s: r.version.version for s, r in arena.hosted.runs.items()} == \
        {"mybot.v1": 1, "mybot.v2": 2}
    # Each run says hello under its seat name, with its own token.
    await _until(lambda: {"mybot.v1", "mybot.v2"} <= set(arena.server.idle_bots()))
    assert "mybot" not in arena.server.idle_bots()
    await arena.hosted.retire("mybot", True)
    assert arena.hosted.runs == {}
    assert arena.server.local_tokens.issued_to("mybot.v1") == 0
    assert arena.server.local_tokens.issued_to("mybot.v2") == 0


async def test_a_version_that_is_missing_or_failed_does_not_start(arena: Arena) -> None:
    await submit_and_build(arena.versions, "mybot", b"int main( {", "main.c")  # fails
    with pytest.raises(HostingError, match="v1 is failed, not ready"):
        await arena.hosted.start_version("mybot", 1, "mybot.v1")
    with pytest.raises(HostingError, match="no version 9"):
        await arena.hosted.start_version("mybot", 9, "mybot.v9")
    assert arena.hosted.runs == {}
