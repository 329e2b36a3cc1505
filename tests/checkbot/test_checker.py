"""The checker catches bad bots, and passes a good one."""

import argparse
import sys
from pathlib import Path

import pytest

from arena.checkbot import add_arguments, check_bot, run_from_args
from arena.checkbot.checks import names

FAKE_BOT = str(Path(__file__).with_name("fake_bot.py"))
ALL_CHECKS = names()


def fake(mode: str) -> list[str]:
    return [sys.executable, FAKE_BOT, mode]


async def test_a_bot_that_keeps_the_protocol_passes_every_check():
    report = await check_bot(fake("good"), timeout_s=10)
    assert report.failed_names() == [], report.render(symbols=False)
    assert [r.name for r in report.results] == ALL_CHECKS
    assert report.encoding == "jsonl"
    assert report.exit_code == 0


async def test_a_bot_that_never_says_hello_fails_and_nothing_else_runs():
    report = await check_bot(fake("silent"), timeout_s=10)
    assert report.failed_names() == ALL_CHECKS
    assert "no hello within 5 s" in report.result("hello").message
    assert report.result("bye").message.startswith("not run:")
    assert report.exit_code == 1


async def test_a_bot_that_answers_illegally_fails_every_answer_check():
    report = await check_bot(fake("illegal"), timeout_s=10, deadline_ms=400)
    assert set(report.failed_names()) == {
        "decide", "exchange", "take", "play", "illegal_action", "unknown_fields", "multiplex",
        "error_names_match", "short_deadline", "reconnect", "reseat", "all_answers",
    }, report.render(symbols=False)
    assert "certainly-not-legal" in report.result("decide").message
    assert "on purpose" in report.result("illegal_action").message
    assert report.exit_code == 1


async def test_a_bot_that_answers_late_fails_the_deadline_checks():
    report = await check_bot(fake("late"), timeout_s=10, deadline_ms=250, short_deadline_ms=150)
    failed = set(report.failed_names())
    assert {"decide", "deadline", "short_deadline", "all_answers"} <= failed, report.render(symbols=False)
    assert {"hello", "welcome"}.isdisjoint(failed)
    assert "within 150 ms" in report.result("short_deadline").message
    assert report.exit_code == 1


async def test_a_bot_that_does_not_reconnect_fails_from_the_reconnect_on():
    report = await check_bot(fake("noreconnect"), timeout_s=10)
    assert report.failed_names() == ["reconnect", "match_end", "reseat", "deferred_reveal", "bye",
                                     "max_matches", "all_answers"], \
        report.render(symbols=False)
    assert "did not reconnect" in report.result("reconnect").message
    assert report.exit_code == 1


async def test_a_bot_that_leaves_on_a_deferred_reveal_fails_that_check():
    report = await check_bot(fake("strict"), timeout_s=10)
    assert "deferred_reveal" in report.failed_names(), report.render(symbols=False)
    assert {"match_end", "reseat", "decide"}.isdisjoint(report.failed_names())
    assert "deferred reveal" in report.result("deferred_reveal").message


def test_the_command_prints_one_line_per_check_and_a_summary(capsys):
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    code = run_from_args(parser.parse_args(["--plain", "--", *fake("good")]))
    out = capsys.readouterr().out.splitlines()
    assert code == 0
    assert [line.split()[:2] for line in out[: len(ALL_CHECKS)]] == [["PASS", n] for n in ALL_CHECKS]
    assert out[-1] == f"{len(ALL_CHECKS)} passed, 0 failed"


def test_the_command_without_a_bot_explains_itself(capsys):
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    assert run_from_args(parser.parse_args([])) == 2
    assert "after '--'" in capsys.readouterr().err


async def test_a_command_that_cannot_start_is_reported():
    report = await check_bot(["/nonexistent/bot-binary"], timeout_s=2)
    assert report.exit_code == 1
    assert "could not start" in report.results[0].message


SDK_BOT = str(Path(__file__).with_name("sdk_bot.py"))


async def test_a_python_sdk_bot_passes():
    report = await check_bot([sys.executable, SDK_BOT, "good"], timeout_s=10)
    assert report.failed_names() == [], report.render(symbols=False)


async def test_an_illegal_answer_the_sdk_replaced_still_fails_the_bot():
    report = await check_bot([sys.executable, SDK_BOT, "zz"], timeout_s=10)
    assert "play" in report.failed_names(), report.render(symbols=False)
    assert '"ZZ"' in report.result("play").message or "'ZZ'" in report.result("play").message
    assert "all_answers" in report.failed_names()
    assert report.exit_code == 1


async def test_a_bot_that_ignores_the_match_an_error_names_fails_that_check():
    report = await check_bot(fake("idonly"), timeout_s=10)
    assert "error_names_match" in report.failed_names(), report.render(symbols=False)
    assert "check-d" in report.result("error_names_match").message


async def test_a_bot_that_leaves_after_one_match_unasked_fails_reseating():
    report = await check_bot(fake("oneshot"), timeout_s=10)
    assert "reseat" in report.failed_names(), report.render(symbols=False)
    assert "second match_start" in report.result("reseat").message


async def test_a_bot_that_says_bye_itself_after_max_matches_passes():
    good = await check_bot(fake("good"), timeout_s=10)
    assert "left by itself after 2 matches" in good.result("max_matches").message


async def test_a_bot_that_waits_for_the_servers_bye_after_max_matches_passes():
    # Protocol §7: after the N-th match_end the server sends bye; a bot may wait for it.
    report = await check_bot(fake("waitbye"), timeout_s=10)
    assert report.failed_names() == [] and report.warned_names() == [], report.render(symbols=False)
    assert "the checker said bye as a server does" in report.result("max_matches").message


async def test_a_bot_that_leaves_before_its_max_matches_fails():
    report = await check_bot(fake("early"), timeout_s=10)
    assert report.failed_names() == ["max_matches"], report.render(symbols=False)
    assert "announced max_matches 2 but left after 1" in report.result("max_matches").message


async def test_a_bot_that_ignores_arena_max_matches_is_warned():
    report = await check_bot(fake("nomax"), timeout_s=10)
    assert report.failed_names() == [], report.render(symbols=False)
    assert report.warned_names() == ["max_matches"]
    assert "ARENA_MAX_MATCHES=2" in report.result("max_matches").message
    assert report.exit_code == 0


async def test_a_sdk_bot_leaves_after_max_matches():
    report = await check_bot([sys.executable, SDK_BOT, "good"], timeout_s=10)
    assert "left by itself after 2 matches" in report.result("max_matches").message
