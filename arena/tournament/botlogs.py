"""``arena logs BOT [MATCH] --db FILE``: what a local bot wrote.

A bot the arena starts has its stdout and stderr kept per match beside the
database (arena/server/local_bots.py); this lists and prints them without
opening the database.
"""

from __future__ import annotations

import argparse
from typing import Any
import sys
from pathlib import Path

from arena.server.local_bots import LOBBY_LOG, bot_log_path


def log_dir_for(db: str) -> Path:
    return Path(db).resolve().parent / "bot-logs"


def add_logs_parser(sub: "argparse._SubParsersAction[Any]", add: Any) -> None:
    """``add(sub, name, **kwargs)``: the CLI's subcommand maker (shared options)."""
    p = add(sub, "logs", help="print what a local bot wrote to stdout/stderr",
                       description="Without MATCH: list the bot's logs, one per match "
                                   f"('{LOBBY_LOG}': while it was not seated).")
    p.add_argument("bot", help="the entrant's name")
    p.add_argument("match", nargs="?", help=f"a match id, or '{LOBBY_LOG}'")
    p.add_argument("--db", default="arena.db",
                   help="the database the tournament ran on (default: %(default)s); "
                        "logs are in bot-logs/ beside it")
    p.set_defaults(func=run_logs)


def run_logs(args: argparse.Namespace) -> int:
    folder = log_dir_for(args.db) / args.bot
    if args.match is None:
        files = sorted(folder.glob("*.log"), key=lambda f: f.stat().st_mtime)
        if not files:
            print(f"arena logs: no logs of bot {args.bot!r} in {folder.parent}", file=sys.stderr)
            return 1
        for f in files:
            print(f"{f.stem}\t{f.stat().st_size} bytes\t{f}")
        return 0
    path = bot_log_path(folder.parent, args.bot, args.match)
    try:
        sys.stdout.write(path.read_text(errors="replace"))
    except FileNotFoundError:
        print(f"arena logs: bot {args.bot!r} wrote nothing during {args.match!r} "
              f"(no {path})", file=sys.stderr)
        return 1
    return 0
