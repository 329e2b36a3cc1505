"""Compliance checker for bot authors: ``arena check-bot -- <command>``.

Starts a scripted server (127.0.0.1 and a free port unless ``--host`` /
``--port`` say otherwise), starts the bot with ``ARENA_HOST``,
``ARENA_PORT``, ``ARENA_TOKEN`` and ``ARENA_NAME`` in its environment, walks
it through every phase and the awkward situations (an ``illegal_action``
error, unknown fields, two matches at once, a short deadline, a dropped
connection, ``match_end``, ``bye``) and prints one line per check.
``--game thirteen`` plays thirteen-card matches instead (the ``arrange``
phase, showdowns, fouls under both ``foul_policy`` values).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

from arena.checkbot.games import GAMES
from arena.checkbot.report import CheckResult, Report, Verdict
from arena.checkbot.runner import DEFAULT_CHECK_TIMEOUT_S, DEFAULT_NAME, DEFAULT_TOKEN, check_bot
from arena.options import at_least, port, seconds

__all__ = ["CheckResult", "Report", "Verdict", "add_arguments", "check_bot", "run_from_args"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--game", choices=sorted(GAMES), default="muushig",
                        help="the game the bot plays (its hello must name it, except muushig)")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address the checker listens on; the bot gets it as ARENA_HOST")
    parser.add_argument("--port", type=port, default=None,
                        help="port the checker listens on (0: a free one, printed); the bot gets "
                             "it as ARENA_PORT (default: a free port, not printed)")
    parser.add_argument("--timeout", type=seconds(positive=True), default=15.0,
                        help="seconds the bot may take to connect or reconnect")
    parser.add_argument("--check-timeout", type=seconds(positive=True), default=DEFAULT_CHECK_TIMEOUT_S,
                        help="seconds any one check may take before it fails")
    parser.add_argument("--deadline-ms", type=at_least(1, " ms"), default=2000,
                        help="deadline_ms of the ordinary requests")
    parser.add_argument("--short-deadline-ms", type=at_least(1, " ms"), default=400,
                        help="deadline_ms of the short-deadline check")
    parser.add_argument("--token", default=DEFAULT_TOKEN, help="the ARENA_TOKEN given to the bot")
    parser.add_argument("--name", default=DEFAULT_NAME, help="the ARENA_NAME given to the bot")
    parser.add_argument("--plain", action="store_true", help="print PASS/FAIL even on a terminal")
    parser.add_argument("--json", action="store_true",
                        help="print the report as one JSON object (for CI); exit code as usual")
    parser.add_argument("command", nargs=argparse.REMAINDER,
                        help="the command that starts the bot, after '--'")


def run_from_args(args: argparse.Namespace) -> int:
    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        print("check-bot: give the command that starts your bot after '--', "
              "e.g. arena check-bot -- python my_bot.py", file=sys.stderr)
        return 2
    json_out = getattr(args, "json", False)

    def listening(host: str, port: int) -> None:
        print(f"check-bot: listening on {host}:{port}", file=sys.stderr if json_out else sys.stdout,
              flush=True)

    port = getattr(args, "port", None)
    report = asyncio.run(check_bot(
        command, timeout_s=args.timeout, deadline_ms=args.deadline_ms,
        short_deadline_ms=args.short_deadline_ms, token=args.token, name=args.name,
        host=getattr(args, "host", "127.0.0.1"), port=port or 0,
        check_timeout_s=getattr(args, "check_timeout", DEFAULT_CHECK_TIMEOUT_S),
        on_listening=listening if port is not None else None, game=getattr(args, "game", "muushig")))
    if json_out:
        print(json.dumps(report.to_json(), indent=2))
    else:
        print(report.render(symbols=sys.stdout.isatty() and not args.plain))
    return report.exit_code
