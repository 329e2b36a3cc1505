"""The options several ``arena`` commands share, each checked where it is
parsed: a bad value is one line naming the option and what it takes, exit
code 2, before anything starts."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, NoReturn

from arena.cli_errors import USAGE_EXIT, UserError
from arena.cli_output import HelpFormatter
from arena.options import at_least, port
from arena.storage.existing import store_file


class Parser(argparse.ArgumentParser):
    """An argument parser whose mistakes are one line (the README's promise):
    what is wrong, and where the options are listed."""

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: {message} (see '{self.prog} --help')", file=sys.stderr)
        self.exit(USAGE_EXIT)


def store_location(text: str) -> str:
    """``--db``: an SQLite file whose folder exists (it is not created: a typo
    must not leave folders behind), ``:memory:`` or a PostgreSQL URL."""
    path = store_file(text)
    if path is not None and not path.parent.is_dir():
        raise argparse.ArgumentTypeError(
            f"no folder {str(path.parent)!r} for the store {text!r} (create it first, or fix the path)")
    return text


def house_bot_kind(text: str) -> str:
    """``--house-bot``: a house bot of at least one game."""
    from arena.games import game_names, get_game

    kinds = {name: sorted(get_game(name).house_bots) for name in game_names()}
    if not any(text in names for names in kinds.values()):
        listed = "; ".join(f"{game}: {', '.join(names)}" for game, names in kinds.items())
        raise argparse.ArgumentTypeError(f"no house bot {text!r} ({listed})")
    return text


def server_options(p: argparse.ArgumentParser, *, db_default: str = "arena.db",
                   http_default: int | None = 8080, port_default: int = 7000) -> None:
    p.add_argument("--host", default="127.0.0.1", help="address to listen on")
    p.add_argument("--port", type=port, default=port_default, help="TCP port for bots (0: any free)")
    p.add_argument("--advertise", metavar="HOST:PORT", default=None,
                   help="where bots reach this node, for movable bots of other nodes "
                        "(default: --host:--port, unless --host is a wildcard)")
    p.add_argument("--http-port", type=port, default=http_default,
                   help="HTTP port for the web pages and API (0: any free"
                        + ("" if http_default else "; default: no web server") + ")")
    p.add_argument("--no-http", action="store_true", help="no web server")
    p.add_argument("--db", type=store_location, default=db_default,
                   help="SQLite file (the embedded store; created if missing, in a folder that "
                        "exists) or postgresql://user@host/dbname")
    p.add_argument("--decision-ms", type=at_least(1, " ms"), default=1000,
                   help="milliseconds a bot has for each decision")
    p.add_argument("--bank-ms", type=at_least(0, " ms"), default=10_000,
                   help="extra milliseconds per match a bot may spend past its deadlines")
    p.add_argument("--person-decision-ms", type=at_least(1000, " ms"), default=30_000,
                   help="milliseconds a person at the play page has for each decision")
    p.add_argument("--person-bank-ms", type=at_least(0, " ms"), default=60_000,
                   help="extra milliseconds per match a person may spend past deadlines")
    p.add_argument("--autopilot-after", type=at_least(1), default=3, metavar="N",
                   help="timeouts in a row before the house bot plays a seat")
    p.add_argument("--rule", action="append", default=[], metavar="KEY=VALUE",
                   help="a rule option, e.g. --rule max_hands=50 --rule last_two_forced=true")


def rules(pairs: list[str]) -> dict[str, Any] | None:
    """``KEY=VALUE`` options; values are read as JSON (numbers, true/false)."""
    result: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key:
            raise UserError(f"--rule {pair!r} must be KEY=VALUE, e.g. --rule max_hands=50")
        try:
            result[key] = json.loads(text)
        except ValueError:
            result[key] = text
    return result or None


def server_config(args: argparse.Namespace, **overrides: Any) -> Any:
    from arena.server.config import ServerConfig

    values = dict(host=args.host, port=args.port, advertise=getattr(args, "advertise", None),
                  http_port=None if args.no_http else args.http_port, db=args.db,
                  decision_ms=args.decision_ms, bank_ms=args.bank_ms,
                  timeouts_before_autopilot=args.autopilot_after, rules=rules(args.rule),
                  person_decision_ms=getattr(args, "person_decision_ms", 30_000),
                  person_bank_ms=getattr(args, "person_bank_ms", 60_000))
    values.update(overrides)
    return ServerConfig(**values)


def add_command(sub: Any, name: str, **kwargs: Any) -> argparse.ArgumentParser:
    """A subcommand with the options every command takes."""
    parser: argparse.ArgumentParser = sub.add_parser(name, formatter_class=HelpFormatter, **kwargs)
    parser.set_defaults(parser=parser)
    common(parser)
    return parser


def common(parser: argparse.ArgumentParser, *, top: bool = False) -> None:
    """Options every (sub)command takes, wherever on the line they are."""
    default = (lambda value: value) if top else (lambda value: argparse.SUPPRESS)
    parser.add_argument("--log-level", default=default("info"),
                        choices=["debug", "info", "warning", "error"],
                        help="the least important log lines shown on stderr (default: info)")
    parser.add_argument("--debug", action="store_true", default=default(False),
                        help="show the traceback of an error instead of one line")

