"""The ``arena`` command: serve, match, tournament, bots, check-bot."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import shlex
import signal
import sys
from pathlib import Path
from typing import Any, Sequence

import structlog

from arena.logs import configure_logging

log = structlog.get_logger("arena.cli")


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    configure_logging(args.log_level)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="arena", description=__doc__)
    parser.add_argument("--log-level", default="info",
                        choices=["debug", "info", "warning", "error"])
    sub = parser.add_subparsers(dest="command")

    serve = sub.add_parser("serve", help="run the bot server and the web server")
    _server_options(serve)
    serve.add_argument("--open", action="store_true",
                       help="accept any token; the bot's name comes from its hello")
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
    serve.set_defaults(func=_cmd_serve)

    match = sub.add_parser("match", help="run one match locally and print the result")
    match.add_argument("players", nargs="*", metavar="PLAYER",
                       help="NAME=COMMAND (a bot the arena starts) or house:KIND; "
                            "missing seats get house bots")
    match.add_argument("--seed", default=None, help="deck seed (same seed, same deals)")
    _server_options(match, db_default=":memory:", http_default=None)
    match.set_defaults(func=_cmd_match)

    tour = sub.add_parser("tournament", help="run or resume a tournament")
    tour.add_argument("config", help="a tournament TOML file, or 'resume'")
    tour.add_argument("resume_id", nargs="?", help="with 'resume': the tournament id")
    _server_options(tour)
    tour.add_argument("--export", default=None, metavar="DIR",
                      help="write standings.json and standings.csv here at the end")
    tour.add_argument("--keep-serving", action="store_true",
                      help="keep the web server up after the tournament ends (Ctrl-C to stop)")
    tour.set_defaults(func=_cmd_tournament)

    bots = sub.add_parser("bots", help="manage registered bots")
    bots_sub = bots.add_subparsers(dest="bots_command")
    for name, help_text in [("add", "register a bot and print its token once"),
                            ("rotate", "give a bot a new token and print it once"),
                            ("remove", "remove a bot (its matches stay)")]:
        p = bots_sub.add_parser(name, help=help_text)
        p.add_argument("name")
        p.add_argument("--db", default="arena.db")
        p.set_defaults(func=_cmd_bots)
    p = bots_sub.add_parser("list", help="list bots")
    p.add_argument("--db", default="arena.db")
    p.set_defaults(func=_cmd_bots)

    check = sub.add_parser("check-bot", help="run a bot through the compliance checks")
    try:
        from arena.checkbot import add_arguments, run_from_args

        add_arguments(check)
        check.set_defaults(func=run_from_args)
    except ImportError:  # pragma: no cover - the checker ships with the package
        pass
    return parser


def _server_options(p: argparse.ArgumentParser, *, db_default: str = "arena.db",
                    http_default: int | None = 8080) -> None:
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=7000, help="TCP port for bots (0: any free)")
    p.add_argument("--http-port", type=int, default=http_default,
                   help="HTTP port for the web pages and API (0: any free)")
    p.add_argument("--no-http", action="store_true", help="no web server")
    p.add_argument("--db", default=db_default, help="SQLite file (the embedded store)")
    p.add_argument("--decision-ms", type=int, default=1000)
    p.add_argument("--bank-ms", type=int, default=10_000)
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
            raise SystemExit(f"arena: --rule {pair!r} must be KEY=VALUE")
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
    from arena.web.keys import admin_token_from

    try:
        admin_token = admin_token_from(args.admin_token, args.admin_token_file)
    except ValueError as exc:
        raise SystemExit(f"arena serve: {exc}") from None
    config = _server_config(args, open=args.open, house_wait_s=args.house_wait,
                            admin_token=admin_token, registration=args.registration,
                            run_tournaments=True, house_bot=args.house_bot)
    return asyncio.run(_serve(config))


async def _serve(config: Any) -> int:
    from arena.server.server import ArenaServer
    from arena.storage import open_store

    store = open_store(config.db)
    server = ArenaServer(config, store)
    await server.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    print(f"arena: bots connect to {config.host}:{server.port}"
          + (f", web on http://{config.host}:{server.http_port}/" if server.http_port else ""),
          flush=True)
    await stop.wait()
    await server.stop()
    store.close()
    return 0


# -- match --------------------------------------------------------------------------

def _parse_players(specs: list[str], seats: int) -> list[tuple[str, str | None, list[str] | None]]:
    """Each entry: (name, house kind or None, command or None)."""
    players: list[tuple[str, str | None, list[str] | None]] = []
    names: set[str] = set()
    for spec in specs:
        if spec.startswith("house:"):
            kind = spec.split(":", 1)[1] or "heuristic"
            name = f"house-{kind}-{len(players) + 1}"
            players.append((name, kind, None))
        elif "=" in spec:
            name, command = spec.split("=", 1)
            if name in names:
                raise SystemExit(f"arena match: two players are named {name!r}")
            players.append((name, None, shlex.split(command)))
        else:
            raise SystemExit(f"arena match: {spec!r} is neither NAME=COMMAND nor house:KIND")
        names.add(players[-1][0])
    if len(players) > seats:
        raise SystemExit(f"arena match: at most {seats} players, got {len(players)}")
    while len(players) < seats:
        players.append((f"house-heuristic-{len(players) + 1}", "heuristic", None))
    return players


def _cmd_match(args: argparse.Namespace) -> int:
    config = _server_config(args, matchmaking=False, open=False)
    return asyncio.run(_match(config, args.players, args.seed))


async def _match(config: Any, specs: list[str], seed: str | None) -> int:
    from arena.games.base import RuleConfigError
    from arena.server.lobby import ClaimTimeoutError
    from arena.server.local_bots import LocalBot, LocalBots
    from arena.server.server import ArenaServer, PlayerSpec
    from arena.storage import open_store

    store = open_store(config.db)
    try:
        server = ArenaServer(config, store)
    except RuleConfigError as exc:
        store.close()
        print(f"arena match: {exc}", file=sys.stderr)
        return 2
    players = _parse_players(specs, server.seats_for(config.rules))
    local = LocalBots()
    await server.start()
    try:
        for name, house, command in players:
            if command is not None:
                await local.start(LocalBot(name=name, command=command), server)
        outcome = await server.play_match(
            [PlayerSpec(name=name, house=house) for name, house, _ in players], seed=seed,
            rules=config.rules)
    except ClaimTimeoutError as exc:
        print(f"arena match: {exc} (its command failed? see the log above)", file=sys.stderr)
        return 1
    finally:
        await local.stop()
        await server.stop()
        store.close()
    if outcome.result is None:
        print(f"match {outcome.match_id} aborted: {outcome.aborted}", file=sys.stderr)
        return 1
    print(format_result(outcome.match_id, outcome.players, outcome.result))
    return 0


def format_result(match_id: str, players: list[str], result: dict[str, Any]) -> str:
    rounds = len(result["final_scores"][0]) if result["final_scores"] else 0
    header = ["rank", "seat", "bot", "stars", *[f"r{r + 1}" for r in range(rounds)], "sum"]
    rows = []
    for seat in sorted(range(len(players)), key=lambda s: (result["ranks"][s], s)):
        rows.append([str(result["ranks"][seat]), str(seat), players[seat],
                     "★" * result["stars"][seat] or "-",
                     *[str(v) for v in result["final_scores"][seat]], str(result["sums"][seat])])
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    lines = [f"match {match_id}",
             "  ".join(h.ljust(w) for h, w in zip(header, widths)),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)) for row in rows]
    return "\n".join(lines)


# -- tournament ------------------------------------------------------------------------

def _cmd_tournament(args: argparse.Namespace) -> int:
    from arena.tournament.runner import run_tournament_command

    return asyncio.run(run_tournament_command(args, _server_config(args, matchmaking=False)))


# -- bots ----------------------------------------------------------------------------

def _cmd_bots(args: argparse.Namespace) -> int:
    from arena.auth import hash_token, new_token
    from arena.storage import open_store
    from arena.storage.base import AlreadyExistsError, NotFoundError

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
                store.add_bot(args.name, hash_token(token))
            except AlreadyExistsError:
                print(f"arena bots add: a bot named {args.name!r} exists already "
                      f"(use 'arena bots rotate {args.name}' for a new token)", file=sys.stderr)
                return 1
            print(token)
            return 0
        if args.bots_command == "rotate":
            token = new_token()
            try:
                store.set_token_hash(args.name, hash_token(token))
            except NotFoundError:
                print(f"arena bots rotate: no bot named {args.name!r}", file=sys.stderr)
                return 1
            print(token)
            return 0
        if args.bots_command == "remove":
            with contextlib.suppress(NotFoundError):
                store.remove_bot(args.name)
                return 0
            print(f"arena bots remove: no bot named {args.name!r}", file=sys.stderr)
            return 1
    finally:
        store.close()
    return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
