"""check-bot --game thirteen passes the sample bots and catches bots that
break the arrange phase, each with a reason the author can act on."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from arena.checkbot import check_bot
from arena.checkbot.checks import names
from arena.checkbot.games import UnknownGameError
from arena.cli import main

ROOT = Path(__file__).resolve().parents[2]
FAKE_BOT = str(Path(__file__).with_name("fake_thirteen_bot.py"))
THIRTEEN_CHECKS = names("thirteen")
# A broken bot's requests each stay open to their deadline: keep it short.
BROKEN_DEADLINE_MS = 300


def fake(mode: str) -> list[str]:
    return [sys.executable, FAKE_BOT, mode]


async def check(command: list[str], **options):
    return await check_bot(command, timeout_s=10, game="thirteen", **options)


def test_the_thirteen_run_has_its_own_phase_and_the_generic_checks():
    assert {"arrange", "illegal_action", "fouls"} <= set(THIRTEEN_CHECKS)
    assert {"decide", "exchange", "take", "play"}.isdisjoint(THIRTEEN_CHECKS)
    generic = {"hello", "deadline", "unknown_fields", "multiplex", "error_names_match", "short_deadline",
               "reconnect", "match_end", "reseat", "deferred_reveal", "bye", "max_matches",
               "all_answers"}
    assert generic <= set(THIRTEEN_CHECKS) and generic <= set(names("muushig"))


async def test_a_bot_that_resubmits_after_illegal_action_passes_without_warnings():
    report = await check(fake("retry"), deadline_ms=800)
    assert report.failed_names() == [] and report.warned_names() == [], report.render(symbols=False)
    assert [r.name for r in report.results] == THIRTEEN_CHECKS
    assert report.exit_code == 0


async def test_a_bot_that_leaves_a_refused_request_to_the_default_is_warned_not_failed():
    report = await check(fake("good"), deadline_ms=800)
    assert report.failed_names() == [], report.render(symbols=False)
    assert report.warned_names() == ["illegal_action"]
    assert "did not answer again" in report.result("illegal_action").message
    assert report.exit_code == 0


@pytest.mark.parametrize(("mode", "reason"), [
    ("twelve", "front must hold 3 cards, not 2"),
    ("foreign", "not a card in your hand"),
    ("twice", "card listed twice"),
])
async def test_a_malformed_arrangement_fails_with_the_reason(mode, reason):
    report = await check(fake(mode), deadline_ms=BROKEN_DEADLINE_MS)
    assert {"arrange", "all_answers"} <= set(report.failed_names()), report.render(symbols=False)
    assert reason in report.result("arrange").message
    assert reason in report.result("all_answers").message
    assert report.exit_code == 1


async def test_a_bot_that_never_answers_fails_the_arrange_and_deadline_checks():
    report = await check(fake("silent"), deadline_ms=BROKEN_DEADLINE_MS, short_deadline_ms=200)
    failed = set(report.failed_names())
    assert {"match_start", "arrange", "deadline", "short_deadline", "all_answers"} <= failed, \
        report.render(symbols=False)
    assert "no answer to arrange request #1 of match check-a" in report.result("arrange").message
    assert "hello" not in failed


async def test_a_foul_under_reject_fails():
    report = await check(fake("foul"), deadline_ms=BROKEN_DEADLINE_MS)
    assert "fouls" in report.failed_names(), report.render(symbols=False)
    assert "under foul_policy = reject" in report.result("fouls").message
    assert "arrange" not in report.failed_names()  # match A plays under penalize
    assert report.exit_code == 1


async def test_a_foul_under_penalize_is_a_warning():
    report = await check(fake("foulpen"), deadline_ms=800)
    assert report.failed_names() == [], report.render(symbols=False)
    assert "fouls" in report.warned_names()
    assert "under foul_policy = penalize" in report.result("fouls").message


async def test_a_bot_whose_hello_does_not_name_the_game_fails_at_hello():
    report = await check(fake("nogame"))
    assert report.failed_names() == THIRTEEN_CHECKS
    assert '"game": "thirteen"' in report.result("hello").message


async def test_a_thirteen_bot_run_as_a_muushig_bot_is_told_at_hello():
    report = await check_bot(fake("good"), timeout_s=10)
    assert report.failed_names() == names("muushig")
    assert 'a muushig bot sends "game": "muushig"' in report.result("hello").message


async def test_an_unknown_game_is_refused_before_the_bot_starts():
    with pytest.raises(UnknownGameError, match="muushig, thirteen"):
        await check_bot(fake("good"), game="poker")


def test_the_command_takes_the_game(capsys):
    assert main(["check-bot", "--plain", "--game", "thirteen", "--deadline-ms", "800", "--", *fake("retry")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split()[:2] for line in out[: len(THIRTEEN_CHECKS)]] == [["PASS", n] for n in THIRTEEN_CHECKS]


async def test_the_python_sample_bot_passes():
    report = await check([sys.executable, str(ROOT / "sample_bots" / "python_thirteen" / "bot.py")], deadline_ms=800)
    assert report.failed_names() == [] and report.warned_names() == [], report.render(symbols=False)
    assert report.encoding == "msgpack"
    assert "left by itself after 2 matches" in report.result("max_matches").message


async def test_the_js_sample_bot_passes():
    if shutil.which("npm") is None or shutil.which("node") is None:
        pytest.skip("node/npm are not installed, so the js_thirteen sample bot cannot be built")
    subprocess.run([str(ROOT / "sample_bots" / "js_thirteen" / "build")], check=True, timeout=300)
    report = await check(["node", str(ROOT / "sample_bots" / "js_thirteen" / "bot.js")], deadline_ms=800)
    assert report.failed_names() == [] and report.warned_names() == [], report.render(symbols=False)
    assert report.encoding == "msgpack"
