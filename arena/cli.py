"""The ``arena`` command: serve, match, tournament, bots, check-bot."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any, Sequence

import structlog

from arena.cli_errors import (
    FAILURE_EXIT, INTERNAL_EXIT, USAGE_EXIT, CommandFailed, UserError, describe,
    require_existing_store,
)
from arena.cli_output import HelpFormatter, RawHelpFormatter, format_result, format_result_columns
from arena.games import game_names
from arena.logs import configure_logging

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


def _common(parser: argparse.ArgumentParser, *, top: bool = False) -> None:
    """Options every (sub)command takes, wherever on the line they are."""
    default = (lambda value: value) if top else (lambda value: argparse.SUPPRESS)
    parser.add_argument("--log-level", default=default("info"),
                        choices=["debug", "info", "warning", "error"],
                        help="the least important log lines shown on stderr (default: info)")
    parser.add_argument("--debug", action="store_true", default=default(False),
                        help="show the traceback of an error instead of one line")


def _add(sub: Any, name: str, **kwargs: Any) -> argparse.ArgumentParser:
    parser = sub.add_parser(name, formatter_class=HelpFormatter, **kwargs)
    parser.set_defaults(parser=parser)
    _common(parser)
    return parser


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="arena", description=DESCRIPTION,
                                     formatter_class=RawHelpFormatter)
    _common(parser, top=True)
    sub = parser.add_subparsers(dest="command", title="commands", metavar="COMMAND")

    serve = _add(sub, "serve", help="run the bot server and the web server",
                 description="Seat connecting bots at tables and serve the web pages.")
    _server_options(serve)
    serve.add_argument("--any-token", "--open", dest="open", action="store_true",
                       help="open mode: accept any token, the bot's name comes from its hello "
                            "(no registration needed; this does not open a browser)")
    serve.add_argument("--house-wait", type=float, default=10.0,
                       help="seconds a lone bot waits before house bots fill its table")
    serve.add_argument("--house-bot", default=None,
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

    match = _add(sub, "match", help="run one match locally and print the result",
                 description="Run one match on a private server and print the result. "
                             "Bots given as NAME=COMMAND are started by the arena with "
                             "ARENA_HOST/PORT/TOKEN/NAME in their environment.")
    match.add_argument("players", nargs="*", metavar="PLAYER",
                       help="NAME=COMMAND (a bot the arena starts; a bare 'python' is the "
                            "arena's interpreter) or house:KIND; missing seats get house bots")
    match.add_argument("--seed", default=None,
                       help="deck seed: the same seed deals the same cards (default: random)")
    match.add_argument("--game", default=None, choices=game_names(),
                       help="the game to play (default: the server's, muushig)")
    _server_options(match, db_default=":memory:", http_default=None, port_default=0)
    match.set_defaults(func=_cmd_match)

    tour = _add(sub, "tournament", help="run or resume a tournament",
                description="Play a tournament file's schedule; run the same command again "
                            "to resume it.")
    tour.add_argument("config", help="a tournament TOML file, or 'resume'")
    tour.add_argument("resume_id", nargs="?", help="with 'resume': the tournament id")
    _server_options(tour)
    from arena.tournament.command import add_tournament_options

    add_tournament_options(tour)  # --export, --keep-serving, --secret, --until-separated
    tour.set_defaults(func=_cmd_tournament)

    bots = _add(sub, "bots", help="manage registered bots",
                description="Register bots for a server run without --any-token.")
    bots_sub = bots.add_subparsers(dest="bots_command", title="commands", metavar="COMMAND")
    for name, help_text in [("add", "register a bot and print its token once"),
                            ("rotate", "give a bot a new token and print it once"),
                            ("remove", "remove a bot (its matches stay)")]:
        p = _add(bots_sub, name, help=help_text, description=help_text[0].upper() + help_text[1:] + ".")
        p.add_argument("name", help="the bot's name: 1-32 letters, digits, '_', '.' or '-'")
        p.add_argument("--db", default="arena.db",
                       help="SQLite file of the server" + (" (created if missing)" if name == "add" else ""))
        p.set_defaults(func=_cmd_bots)
    p = _add(bots_sub, "list", help="list registered bots", description="List registered bots.")
    p.add_argument("--db", default="arena.db", help="SQLite file of the server")
    p.set_defaults(func=_cmd_bots)
    from arena.hosting.cli import add_bot_commands
    add_bot_commands(bots_sub, _add)

    from arena.storage.transfer import add_db_arguments

    add_db_arguments(_add(sub, "db", help="store maintenance: migrate, copy SQLite to PostgreSQL",
                          description="Migrate a store's schema, or copy a whole store "
                                      "(SQLite to PostgreSQL) with nothing lost."))
    from arena.cli_data import add_data_commands  # export, replay, view, match --output
    from arena.tournament.botlogs import add_logs_parser
    from arena.tournament.verify import add_verify_parser
    add_verify_parser(sub, _add)  # arena verify TOURNAMENT | --match ID
    add_logs_parser(sub, _add)  # arena logs BOT [MATCH]
    add_data_commands(sub, _add)

    check = _add(sub, "check-bot", help="run a bot through the compliance checks",
                 description="Start a bot against a scripted server and check every part "
                             "of the protocol it can get wrong. A bare 'python' in the command "
                             "is the arena's interpreter.")
    try:
        from arena.checkbot import add_arguments, run_from_args

        add_arguments(check)
        check.set_defaults(func=run_from_args)
    except ImportError:  # pragma: no cover - the checker ships with the package
        pass
    return parser


def _server_options(p: argparse.ArgumentParser, *, db_default: str = "arena.db",
                    http_default: int | None = 8080, port_default: int = 7000) -> None:
    p.add_argument("--host", default="127.0.0.1", help="address to listen on")
    p.add_argument("--port", type=int, default=port_default, help="TCP port for bots (0: any free)")
    p.add_argument("--http-port", type=int, default=http_default,
                   help="HTTP port for the web pages and API (0: any free"
                        + ("" if http_default else "; default: no web server") + ")")
    p.add_argument("--no-http", action="store_true", help="no web server")
    p.add_argument("--db", default=db_default,
                   help="SQLite file (the embedded store; created if missing) or postgresql://user@host/dbname")
    p.add_argument("--decision-ms", type=int, default=1000,
                   help="milliseconds a bot has for each decision")
    p.add_argument("--bank-ms", type=int, default=10_000,
                   help="extra milliseconds per match a bot may spend past its deadlines")
    p.add_argument("--autopilot-after", type=int, default=3, metavar="N",
                   help="timeouts in a row before the house bot plays a seat")
    p.add_argument("--rule", action="append", default=[], metavar="KEY=VALUE",
                   help="a rule option, e.g. --rule max_hands=50 --rule last_two_forced=true")


def _rules(pairs: list[str]) -> dict[str, Any] | None:
    """``KEY=VALUE`` options; values are read as JSON (numbers, true/false)."""
    import json

    rules: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key:
            raise UserError(f"--rule {pair!r} must be KEY=VALUE, e.g. --rule max_hands=50")
        try:
            rules[key] = json.loads(text)
        except ValueError:
            rules[key] = text
    return rules or None


def _server_config(args: argparse.Namespace, **overrides: Any) -> Any:
    from arena.server.config import ServerConfig

    values = dict(host=args.host, port=args.port,
                  http_port=None if args.no_http else args.http_port, db=args.db,
                  decision_ms=args.decision_ms, bank_ms=args.bank_ms,
                  timeouts_before_autopilot=args.autopilot_after, rules=_rules(args.rule))
    values.update(overrides)
    return ServerConfig(**values)


# -- serve ------------------------------------------------------------------------

def _cmd_serve(args: argparse.Namespace) -> int:
    from arena.app import serve
    from arena.web.keys import admin_token_from

    try:
        admin_token = admin_token_from(args.admin_token, args.admin_token_file)
    except ValueError as exc:
        raise SystemExit(f"arena serve: {exc}") from None
    config = _server_config(args, open=args.open, house_wait_s=args.house_wait,
                            admin_token=admin_token, registration=args.registration,
                            run_tournaments=True, house_bot=args.house_bot)
    return asyncio.run(serve(config, hosted=args.hosted, ladder_interval=args.ladder_interval,
                             ladder_tables=args.ladder_tables, workers=args.workers,
                             log_level=args.log_level))


# -- match --------------------------------------------------------------------------

def _parse_players(specs: list[str], seats: int, house_kinds: Sequence[str] = (),
                   default_house: str = "heuristic") -> list[tuple[str, str | None, list[str] | None]]:
    """Each entry: (name, house kind or None, command or None); ``house:``
    and missing seats get ``default_house``, the game's best house bot."""
    from arena.web.errors import NAME_RE

    players: list[tuple[str, str | None, list[str] | None]] = []
    names: set[str] = set()
    for spec in specs:
        if spec.startswith("house:"):
            kind = spec.split(":", 1)[1] or default_house
            if house_kinds and kind not in house_kinds:
                raise UserError(f"no house bot {kind!r}; there are: {', '.join(sorted(house_kinds))} "
                                f"(e.g. house:{default_house})")
            name = f"house-{kind}-{len(players) + 1}"
            players.append((name, kind, None))
        elif "=" in spec:
            name, command = spec.split("=", 1)
            if not NAME_RE.fullmatch(name):
                raise UserError(f"player name {name!r} must be 1-32 letters, digits, '_', '.' or '-'")
            if name in names:
                raise UserError(f"two players are named {name!r}; give each NAME=COMMAND its own name")
            try:
                argv = shlex.split(command)
            except ValueError as exc:
                raise UserError(f"player {name!r}: cannot read its command {command!r}: {exc}") from None
            if not argv:
                raise UserError(f"player {name!r} has an empty command; write NAME=COMMAND")
            players.append((name, None, argv))
        else:
            raise UserError(f"{spec!r} is neither NAME=COMMAND (a bot to start) nor house:KIND "
                            "(e.g. house:heuristic)")
        names.add(players[-1][0])
    if len(players) > seats:
        raise UserError(f"at most {seats} players, got {len(players)}")
    while len(players) < seats:
        players.append((f"house-{default_house}-{len(players) + 1}", default_house, None))
    return players


def check_command(name: str, command: list[str], cwd: Path | None = None) -> None:
    """Refuse, before anything starts, a bot command that cannot run."""
    from arena.server.local_bots import resolve_command

    program = resolve_command(command)[0]
    if "/" in program:
        path = Path(program) if cwd is None or Path(program).is_absolute() else cwd / program
        if not path.exists():
            raise UserError(f"player {name!r}: {program!r} not found (no such file)")
        if not path.is_file() or not os.access(path, os.X_OK):
            raise UserError(f"player {name!r}: {program!r} is not an executable file "
                            f"(chmod +x it, or start it with its interpreter)")
    elif shutil.which(program) is None:
        raise UserError(f"player {name!r}: command {program!r} not found on PATH "
                        "(install it, or give its path)")


def _cmd_match(args: argparse.Namespace) -> int:
    game = {"game": args.game} if args.game else {}
    config = _server_config(args, matchmaking=False, open=False, **game)
    return asyncio.run(_match(config, args.players, args.seed))


# How often ``arena match`` looks whether a bot it started died before
# connecting, and how many of its last stderr lines it shows then.
_BOT_WATCH_S = 0.05
_STDERR_LINES = 8


async def _match(config: Any, specs: list[str], seed: str | None) -> int:
    from arena.games.base import RuleConfigError
    from arena.server.lobby import ClaimTimeoutError
    from arena.server.local_bots import LocalBot, LocalBots
    from arena.app import Arena
    from arena.server.server import PlayerSpec
    from arena.storage import open_store

    store = open_store(config.db)
    try:
        arena = Arena(config, store)
        server = arena.server
    except RuleConfigError:
        store.close()
        raise
    try:
        players = _parse_players(specs, server.seats_for(config.rules), tuple(server.spec.house_bots),
                                 server.spec.default_house_bot)
        for name, _, command in players:
            if command is not None:
                check_command(name, command)
    except BaseException:
        store.close()
        raise
    local = LocalBots()
    await arena.start()
    try:
        for name, house, command in players:
            if command is not None:
                await local.start(LocalBot(name=name, command=command), server)
        play = asyncio.ensure_future(server.play_match(
            [PlayerSpec(name=name, house=house) for name, house, _ in players], seed=seed,
            rules=config.rules))
        dead = await _first_bot_dead_before_seating(play, server, local)
        if dead is not None:
            play.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await play
            raise CommandFailed(_bot_died(dead))
        outcome = await play
    except ClaimTimeoutError as exc:
        raise CommandFailed(f"{exc} (does it read ARENA_HOST and ARENA_PORT?)") from None
    finally:
        await local.stop()
        await arena.stop()
        store.close()
    if outcome.result is None:
        raise CommandFailed(f"match {outcome.match_id} aborted: {outcome.aborted}")
    columns = server.spec.extra.get("web", {}).get("result_columns")
    if columns and not _has_round_table(outcome.result):
        print(format_result_columns(outcome.match_id, outcome.players, outcome.result, columns))
    else:
        print(format_result(outcome.match_id, outcome.players, outcome.result))
    return 0


def _has_round_table(result: dict[str, Any]) -> bool:
    """A result with stars, per-round final scores and sums gets the table
    with a column per round; any other game's, its descriptor's columns."""
    return {"stars", "final_scores", "sums"} <= result.keys()


async def _first_bot_dead_before_seating(play: asyncio.Future[Any], server: Any,
                                         local: Any) -> Any | None:
    """Wait until the match has its table (every bot connected) or a bot the
    arena started has exited before that; return that bot, else None.

    Without this, a bot that exits at once is restarted for the whole claim
    timeout and the user waits 30 s for an error."""
    while not play.done() and not server.tables:
        for bot in local.bots.values():
            if bot.crashes or (bot.process is not None and bot.process.returncode is not None):
                return bot
        await asyncio.sleep(_BOT_WATCH_S)
    return None


def _bot_died(bot: Any) -> str:
    code = bot.process.returncode if bot.process is not None else None
    code = getattr(bot, "exit_code", None) if code is None else code
    tail = [line for line in getattr(bot, "stderr_tail", []) if line.strip()][-_STDERR_LINES:]
    text = f"bot {bot.name!r} exited with code {code} before it connected"
    if tail:
        text += "; the last lines of its stderr:\n" + "\n".join(f"  | {line}" for line in tail)
    else:
        text += " (it wrote nothing to stderr)"
    return text


# -- tournament ------------------------------------------------------------------------

def _make_arena(config: Any, store: Any, hub: Any = None) -> Any:
    from arena.app import Arena

    return Arena(config, store, hub=hub)


def _cmd_tournament(args: argparse.Namespace) -> int:
    from arena.tournament.command import run_tournament_command

    config = _server_config(args, matchmaking=False)
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
    from arena.cli_errors import existing_store_path

    if not terminal or getattr(args, "log_level", "info") == "debug":
        return None
    store = existing_store_path(args.db)
    return store.with_suffix(".log") if store is not None else Path("arena.log")


# -- bots ----------------------------------------------------------------------------

def _cmd_bots(args: argparse.Namespace) -> int:
    from arena.auth import hash_token, new_token
    from arena.storage import open_store
    from arena.storage.base import AlreadyExistsError, NotFoundError
    from arena.web.errors import NAME_RE

    name = getattr(args, "name", None)
    if args.bots_command == "add":
        if not NAME_RE.fullmatch(name):
            raise UserError(f"bot name {name!r} must be 1-32 letters, digits, '_', '.' or '-' "
                            "(the names the server and the web accept)")
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


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
