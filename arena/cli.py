"""The ``arena`` command: serve, match, tournament, bots, check-bot."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any, Sequence

import structlog

from arena.cli_bots import add_bots_parser
from arena.cli_errors import FAILURE_EXIT, INTERNAL_EXIT, USAGE_EXIT, CommandFailed, UserError, describe
from arena.cli_match import add_match_parser
from arena.cli_options import (
    Parser, add_command, common, house_bot_kind, server_config, server_options,
)
from arena.cli_output import RawHelpFormatter
from arena.logs import configure_logging
from arena.options import seconds

log = structlog.get_logger("arena.cli")

DESCRIPTION = """\
Muushig Arena: bots play the card game Muushig over TCP.

  arena match "me=python mybot.py"        one match, your bot against house bots
  arena check-bot -- python mybot.py      is my bot speaking the protocol right?
  arena tournament examples/demo.toml     a round-robin tournament, standings on the web
  arena serve --any-token                 a server any bot may join

A bare 'python' or 'python3' in a bot's command means the arena's own
interpreter, so Python bots find the SDK. Mistakes get one line and exit
code 2; --debug shows the traceback."""


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args, extra = parser.parse_known_args(argv)
    if extra:
        # The subcommand's own usage, not the top-level one, for `match --sed`.
        getattr(args, "parser", parser).error(f"unrecognized arguments: {' '.join(extra)}")
    configure_logging(getattr(args, "log_level", "info"))
    if not getattr(args, "func", None):
        group = getattr(args, "parser", parser)
        group.print_help(sys.stderr)
        return USAGE_EXIT
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        if getattr(args, "debug", False):
            raise
        message = describe(exc, args)
        if isinstance(exc, CommandFailed):
            print(f"arena {args.command}: {exc}", file=sys.stderr)
            return FAILURE_EXIT
        if message is None:
            print(f"arena {args.command}: internal error: {type(exc).__name__}: {exc} "
                  "(run again with --debug for the traceback, and report it)", file=sys.stderr)
            return INTERNAL_EXIT
        print(f"arena {args.command}: {message}", file=sys.stderr)
        return USAGE_EXIT


def _parser() -> argparse.ArgumentParser:
    parser = Parser(prog="arena", description=DESCRIPTION, formatter_class=RawHelpFormatter)
    common(parser, top=True)
    sub = parser.add_subparsers(dest="command", title="commands", metavar="COMMAND")

    serve = add_command(sub, "serve", help="run the bot server and the web server",
                        description="Seat connecting bots at tables and serve the web pages.")
    server_options(serve)
    serve.add_argument("--any-token", "--open", dest="open", action="store_true",
                       help="open mode: accept any token, the bot's name comes from its hello "
                            "(no registration needed; this does not open a browser)")
    serve.add_argument("--house-wait", type=seconds(), default=10.0,
                       help="seconds a lone bot waits before house bots fill its table")
    serve.add_argument("--house-bot", type=house_bot_kind, default=None,
                       help="house bot filling empty seats (default: the game's best)")
    serve.add_argument("--admin-token", default=None,
                       help="token for admin actions over HTTP (default: none, admin disabled;"
                            " visible in ps: prefer --admin-token-file or ARENA_ADMIN_TOKEN)")
    serve.add_argument("--admin-token-file", default=None, metavar="PATH",
                       help="read the admin token from this file")
    serve.add_argument("--registration", default="admin", choices=["open", "admin", "closed"],
                       help="who may register bots over HTTP (default: admin)")
    from arena.hosting.cli import add_serve_options
    from arena.server.workers import worker_count

    add_serve_options(serve)
    serve.add_argument("--workers", type=worker_count, default=1, metavar="N",  # docs/scaling.md
                       help="processes playing the bots")
    serve.set_defaults(func=_cmd_serve)

    add_match_parser(sub)

    tour = add_command(sub, "tournament", help="run or resume a tournament",
                       description="Play a tournament file's schedule; run the same command again "
                                   "to resume it.")
    tour.add_argument("config", help="a tournament TOML file, 'resume' or 'cancel'")
    tour.add_argument("resume_id", nargs="?",
                      help="with 'resume' or 'cancel': the tournament id")
    server_options(tour)
    from arena.tournament.command import add_tournament_options

    add_tournament_options(tour)  # --export, --keep-serving, --secret, --until-separated
    from arena.hosting.cli import add_seat_options

    add_seat_options(tour)  # hosted entrants: --entrant-seat-wait, --seat-give-up
    tour.set_defaults(func=_cmd_tournament)

    add_bots_parser(sub)
    from arena.cli_challenge import add_challenge_parser

    add_challenge_parser(sub)  # arena challenge OPPONENT... | --show ID

    from arena.storage.transfer import add_db_arguments

    add_db_arguments(add_command(sub, "db", help="store maintenance: migrate, copy SQLite to PostgreSQL",
                                 description="Migrate a store's schema, or copy a whole store "
                                             "(SQLite to PostgreSQL) with nothing lost."))
    from arena.cli_data import add_data_commands  # export, replay, view, match --output
    from arena.tournament.botlogs import add_logs_parser
    from arena.tournament.verify import add_verify_parser

    add_verify_parser(sub, add_command)  # arena verify TOURNAMENT | --match ID
    add_logs_parser(sub, add_command)  # arena logs BOT [MATCH]
    add_data_commands(sub, add_command)

    check = add_command(sub, "check-bot", help="run a bot through the compliance checks",
                        description="Start a bot against a scripted server and check every part "
                                    "of the protocol it can get wrong. A bare 'python' in the "
                                    "command is the arena's interpreter.")
    try:
        from arena.checkbot import add_arguments, run_from_args

        add_arguments(check)
        check.set_defaults(func=run_from_args)
    except ImportError:  # pragma: no cover - the checker ships with the package
        pass
    return parser


# -- serve ------------------------------------------------------------------------

def _cmd_serve(args: argparse.Namespace) -> int:
    from arena.app import serve
    from arena.web.keys import admin_token_from

    try:
        admin_token = admin_token_from(args.admin_token, args.admin_token_file)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    config = server_config(args, open=args.open, house_wait_s=args.house_wait,
                           admin_token=admin_token, registration=args.registration,
                           run_tournaments=True, house_bot=args.house_bot)
    from arena.hosting.cli import seat_settings
    from arena.hosting.errors import HostingSettingsError

    try:
        seats = seat_settings(args)
    except HostingSettingsError as exc:
        raise UserError(str(exc)) from None
    return asyncio.run(serve(config, hosted=args.hosted, ladder_interval=args.ladder_interval,
                             ladder_tables=args.ladder_tables, workers=args.workers,
                             log_level=args.log_level, seats=seats))


# -- tournament ------------------------------------------------------------------------

def _make_arena(config: Any, store: Any, hub: Any = None) -> Any:
    from arena.app import Arena

    return Arena(config, store, hub=hub)


def _cmd_tournament(args: argparse.Namespace) -> int:
    from arena.tournament.command import run_tournament_command

    if args.config == "cancel":
        from arena.tournament.cancel import cancel_command

        return cancel_command(args)
    if args.config == "resume":
        from arena.storage import require_existing_store

        # Resuming reads the tournament from the store: a typo must not create one.
        require_existing_store(args.db, hint="check --db (the store the tournament ran on)")
    from arena.hosting.cli import seat_settings
    from arena.hosting.errors import HostingSettingsError

    try:
        args.hosted_seats = seat_settings(args)  # for its hosted entrants' runs
    except HostingSettingsError as exc:
        raise UserError(str(exc)) from None
    config = server_config(args, matchmaking=False)
    log_file = tournament_log_file(args, terminal=sys.stdout.isatty())
    if log_file is None:
        return asyncio.run(run_tournament_command(args, config, _make_arena))
    from arena.logs import divert_logs

    # A progress bar owns the terminal: info lines would tear through it.
    print(f"arena: log lines go to {log_file} while the progress bar is shown "
          "(warnings and errors still show here)", flush=True)
    with divert_logs(log_file):
        return asyncio.run(run_tournament_command(args, config, _make_arena))


def tournament_log_file(args: argparse.Namespace, *, terminal: bool) -> Path | None:
    """Where a tournament's log lines go while its progress bar is shown:
    next to the store (``demo.db`` -> ``demo.log``); None off a terminal or
    when the user asked for debug lines."""
    from arena.storage.existing import store_file

    if not terminal or getattr(args, "log_level", "info") == "debug":
        return None
    store = store_file(args.db)
    return store.with_suffix(".log") if store is not None else Path("arena.log")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
