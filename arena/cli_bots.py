"""``arena bots add|rotate|remove|list``: registered bots and their tokens."""

from __future__ import annotations

import argparse
import contextlib
from typing import Any

from arena.cli_errors import USAGE_EXIT, CommandFailed, UserError
from arena.cli_options import add_command, store_location
from protocol.names import BOT_NAME_RULE, bot_name_problem


def add_bots_parser(sub: Any) -> None:
    bots = add_command(sub, "bots", help="manage registered bots",
                       description="Register bots for a server run without --any-token.")
    bots_sub = bots.add_subparsers(dest="bots_command", title="commands", metavar="COMMAND")
    for name, help_text in [("add", "register a bot and print its token once"),
                            ("rotate", "give a bot a new token and print it once"),
                            ("remove", "remove a bot (its matches stay)")]:
        p = add_command(bots_sub, name, help=help_text,
                        description=help_text[0].upper() + help_text[1:] + ".")
        p.add_argument("name", help=f"the bot's name: {BOT_NAME_RULE}; not of the 'house' family")
        p.add_argument("--db", type=store_location, default="arena.db",
                       help="SQLite file of the server" + (" (created if missing)" if name == "add" else ""))
        p.set_defaults(func=run_bots_command)
    p = add_command(bots_sub, "list", help="list registered bots", description="List registered bots.")
    p.add_argument("--db", default="arena.db", help="SQLite file of the server")
    p.set_defaults(func=run_bots_command)
    from arena.hosting.cli import add_bot_commands

    add_bot_commands(bots_sub, add_command)


def run_bots_command(args: argparse.Namespace) -> int:
    from arena.auth import hash_token, new_token
    from arena.storage import open_store, require_existing_store
    from arena.storage.base import AlreadyExistsError, NotFoundError

    name: str = getattr(args, "name", "")
    if args.bots_command == "add":
        problem = bot_name_problem(name)
        if problem is not None:
            raise UserError(f"{problem} (the names the server and the web accept)")
    else:
        # Only `add` may create a store: a typo in --db must not look like
        # an empty arena.
        require_existing_store(args.db, hint="check --db (bots are kept in the server's "
                                             "store; 'arena bots add NAME --db FILE' creates one)")
    store = open_store(args.db)
    try:
        if args.bots_command == "list":
            for bot in store.list_bots():
                if not bot.removed:
                    print(f"{bot.name}\t{bot.kind}")
            return 0
        if args.bots_command == "add":
            token = new_token()
            try:
                store.add_bot(name, hash_token(token))
            except AlreadyExistsError:
                raise CommandFailed(f"a bot named {name!r} exists already "
                                    f"(use 'arena bots rotate {name}' for a new token)") from None
            print(token)
            return 0
        if args.bots_command == "rotate":
            token = new_token()
            try:
                store.set_token_hash(name, hash_token(token))
            except NotFoundError:
                raise CommandFailed(f"no bot named {name!r} in {args.db}") from None
            print(token)
            return 0
        if args.bots_command == "remove":
            with contextlib.suppress(NotFoundError):
                store.remove_bot(name)
                return 0
            raise CommandFailed(f"no bot named {name!r} in {args.db}")
    finally:
        store.close()
    return USAGE_EXIT
