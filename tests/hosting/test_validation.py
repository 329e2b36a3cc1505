"""The validation match: a new version plays once, unrated, against house
bots before the ladder; one that crashes, times out every decision or
answers illegally throughout is failed with that match to replay."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import AsyncIterator

import pytest

from arena.hosting.builder import submit_and_build
from arena.hosting.hosted import HostedBots
from arena.hosting.ladder import Ladder, LadderSettings
from arena.hosting.validation import VALIDATION_SCOPE, judge, play_validation
from arena.hosting.versions import BuildStatus, VersionStore
from arena.server.config import ServerConfig
from arena.server.server import ArenaServer
from arena.storage.sqlite import SqliteStore
from tests.hosting.conftest import SAYS_HELLO, Arena, needs_sandbox, versions_at

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bots"
GOOD = (SAMPLES / "python_random" / "bot.py").read_bytes()
# Says hello, then exits at the first request it is sent.
CRASHER = (SAYS_HELLO + "import os\nwhile b'request' not in _hello.recv(65536):\n    pass\n"
           "os._exit(3)\n").encode()
SILENT = (SAYS_HELLO + "import time\ntime.sleep(3600)\n").encode()  # never answers
# Says hello, then answers every request with an action no game allows.
ILLEGAL = (SAYS_HELLO + """
buffer = b""
while True:
    data = _hello.recv(65536)
    if not data:
        break
    buffer += data
    *lines, buffer = buffer.split(b"\\n")
    for line in lines:
        message = _j.loads(line)
        if message.get("type") == "request":
            _hello.sendall((_j.dumps({"type": "action", "match": message["match"],
                                      "id": message["id"], "action": "no such move"})
                            + "\\n").encode())
""").encode()


# -- the rule -------------------------------------------------------------------

def test_a_bot_that_answered_in_time_passes_though_it_timed_out_sometimes() -> None:
    assert judge(answered=3, timeouts=5, illegal=2, disconnects=0) is None


def test_a_bot_whose_connection_ended_crashed() -> None:
    assert "crashed" in judge(answered=10, timeouts=0, illegal=0, disconnects=1)


def test_a_bot_that_never_answered_in_time_timed_out_every_decision() -> None:
    assert "timed out every decision (4 timeouts" in judge(answered=0, timeouts=4, illegal=0,
                                                            disconnects=0)


def test_a_bot_whose_every_answer_was_refused_answered_illegally_throughout() -> None:
    assert "illegally throughout" in judge(answered=0, timeouts=4, illegal=9, disconnects=0)


def test_an_aborted_match_does_not_pass() -> None:
    assert "aborted" in judge(answered=2, timeouts=0, illegal=0, disconnects=0,
                              aborted="server stopped")


def test_a_failed_validation_gives_the_ladder_back_the_version_before(tmp_path: Path) -> None:
    versions = versions_at(tmp_path)
    for number in (1, 2):
        version = versions.new_version("bot", "bot.py", "python")
        version.status = BuildStatus.READY
        versions.save(version)
    assert versions.active("bot").version == 2
    versions.record_validation(versions.get("bot", 2), {"passed": False, "match_id": "m-9",
                                                        "reason": "it crashed"})
    failed = versions.get("bot", 2)
    assert failed.status is BuildStatus.FAILED
    assert failed.reason == "validation match m-9: it crashed"
    assert versions.active("bot").version == 1


# -- played ---------------------------------------------------------------------

@pytest.fixture
async def quick(tmp_path: Path) -> AsyncIterator[Arena]:
    """An arena with short decisions: a silent bot's match ends soon."""
    db = tmp_path / "arena.db"
    store = SqliteStore(str(db))
    server = ArenaServer(ServerConfig(host="127.0.0.1", port=0, http_port=None, db=str(db),
                                      house_wait_s=None, decision_ms=250, bank_ms=0), store)
    await server.start()
    sockets = Path(tempfile.mkdtemp(prefix="arena-"))
    versions = VersionStore(store, tmp_path / "hosted")
    hosted = HostedBots(versions, sockets, server.start_unix, server.local_tokens)
    try:
        yield Arena(server, versions, hosted, store)
    finally:
        await hosted.stop_all()
        await server.stop()
        store.close()
        shutil.rmtree(sockets, ignore_errors=True)


@needs_sandbox
@pytest.mark.parametrize("bot,data,reason", [
    ("crasher", CRASHER, "crashed"),
    ("silent", SILENT, "timed out every decision"),
    ("illegal", ILLEGAL, "answered illegally throughout"),
])
async def test_a_version_that_fails_its_validation_match_is_failed_with_the_match(
        quick: Arena, bot: str, data: bytes, reason: str) -> None:
    version = await submit_and_build(quick.versions, bot, data, "bot.py")
    assert version.status is BuildStatus.READY, quick.versions.build_log(bot, 1)
    result = await play_validation(quick.server, quick.hosted, version, claim_timeout_s=15)
    assert not result.passed and reason in result.reason
    stored = quick.versions.get(bot, 1)
    assert stored.status is BuildStatus.FAILED
    assert stored.reason.startswith(f"validation match {result.match_id}: ")
    match = quick.store.get_match(result.match_id)  # kept, to replay
    assert match.tournament_id == VALIDATION_SCOPE and bot in match.players
    assert quick.versions.active(bot) is None


@needs_sandbox
async def test_the_ladder_validates_a_new_version_before_seating_it(quick: Arena) -> None:
    for name, data in (("good", GOOD), ("silent", SILENT)):
        assert (await submit_and_build(quick.versions, name, data, "bot.py")).status \
            is BuildStatus.READY
    ladder = Ladder(quick.server, quick.hosted,
                    settings=LadderSettings(max_tables=1, claim_timeout_s=15))
    snapshot = await ladder.read_snapshot()
    assert ladder.entrants(snapshot) == []  # nobody is validated yet
    for _ in range(2):
        task = ladder.validate_one(await ladder.read_snapshot())
        assert task is not None
        await task
    assert ladder.validate_one(await ladder.read_snapshot()) is None
    passed = {r.match_id: r.passed for r in ladder.validated}
    assert sorted(passed.values()) == [False, True]
    names = {e.name for e in ladder.entrants(await ladder.read_snapshot())}
    assert names == {"good"}  # the failed version never reaches the ladder
    task = ladder.start_one(await ladder.read_snapshot())
    assert task is not None
    match = quick.store.get_match(await task)
    assert "good" in match.players and "silent" not in match.players and match.tournament_id is None
    ratings = {bot for (_, bot) in __import__("arena.hosting.service", fromlist=["x"])
               .ladder_ratings(quick.store)}
    assert "silent" not in ratings  # the validation match is unrated


# -- on the bot's page ------------------------------------------------------------

def test_the_bots_page_shows_the_validation_verdict_and_its_match_not_the_reason() -> None:
    from arena.hosting.versions import BotVersion
    from arena.web.hosting_pages import _validation

    def version(status: BuildStatus, validation: dict | None) -> BotVersion:
        return BotVersion("bot", 1, "python", status, 0.0, "bot.py", validation=validation)

    failed = _validation(version(BuildStatus.FAILED, {"passed": False, "match_id": "m-9",
                                                      "reason": "it crashed"}))
    assert failed.startswith("failed") and 'href="/matches/m-9"' in failed
    assert "crashed" not in failed  # the reason is the owner's
    assert _validation(version(BuildStatus.READY, {"passed": True, "match_id": "m-1"})) \
        .startswith("passed")
    assert _validation(version(BuildStatus.READY, None)) == "waiting"
