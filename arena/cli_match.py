"""``arena match``: one match on a private server, the result printed.

Bots given as ``NAME=COMMAND`` are started by the arena; a bot that cannot
start, exits before it connects or never plays is reported with its exit
code and the last lines of its stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

from arena.cli_errors import CommandFailed, UserError
from arena.cli_options import add_command, server_config, server_options
from arena.cli_output import format_result, format_result_columns
from arena.games import game_names
from arena.storage.existing import store_file
from protocol.names import bot_name_problem


def add_match_parser(sub: Any) -> None:
    match = add_command(sub, "match", help="run one match locally and print the result",
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
    server_options(match, db_default=":memory:", http_default=None, port_default=0)
    match.set_defaults(func=run_match_command)


def parse_players(specs: list[str], seats: int, house_kinds: Sequence[str] = (),
                   default_house: str = "heuristic") -> list[tuple[str, str | None, list[str] | None]]:
    """Each entry: (name, house kind or None, command or None); ``house:``
    and missing seats get ``default_house``, the game's best house bot."""
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
            problem = bot_name_problem(name)
            if problem is not None:
                raise UserError(f"player {problem.removeprefix('bot name ')}")
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
    """Refuse, before anything starts, a bot command that cannot run: a
    program that is not there, or an interpreter's script that is not."""
    from arena.server.local_bots import command_problem

    problem = command_problem(name, command, cwd, who="player")
    if problem is not None:
        raise UserError(problem)


def run_match_command(args: argparse.Namespace) -> int:
    game = {"game": args.game} if args.game else {}
    config = server_config(args, matchmaking=False, open=False, **game)
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
    from arena.tournament.log_folder import bot_log_dir

    store = open_store(config.db)
    try:
        arena = Arena(config, store)
        server = arena.server
    except RuleConfigError:
        store.close()
        raise
    try:
        players = parse_players(specs, server.seats_for(config.rules), tuple(server.spec.house_bots),
                                 server.spec.default_house_bot)
        for name, _, command in players:
            if command is not None:
                check_command(name, command)
    except BaseException:
        store.close()
        raise
    # Each started bot's output is kept per match beside a file store, where
    # `arena logs BOT --db FILE` finds it (an in-memory store's folder is
    # temporary: what matters of it is shown when something goes wrong).
    kept = store_file(config.db) is not None
    await arena.start()
    # Made once the arena runs (a port already taken leaves nothing behind),
    # removed in the finally below.
    log_dir = bot_log_dir(store)
    local = LocalBots(log_dir)
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
        if not kept:
            shutil.rmtree(log_dir, ignore_errors=True)
    where = (lambda name: f"arena logs {name} --db {config.db}") if kept else None
    if outcome.result is None:
        raise CommandFailed(aborted_text(outcome.match_id, outcome.aborted, server.spec.name,
                                         list(local.bots.values()), where))
    for bot in local.bots.values():
        if bot.crashes:
            print(f"arena match: warning: {crashed_text(bot, where)}", file=sys.stderr)
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
            if bot.crashes:  # counted once its last output is read
                return bot
        await asyncio.sleep(_BOT_WATCH_S)
    return None


def _last_lines(lines: list[str]) -> str:
    shown = [line for line in lines if line.strip()][-_STDERR_LINES:]
    if not shown:
        return " (it wrote nothing)"
    return "; the last lines it wrote:\n" + "\n".join(f"  | {line}" for line in shown)


def aborted_text(match_id: str, reason: str | None, game: str, bots: list[Any],
                 where: Callable[[str], str] | None) -> str:
    """Why a match was aborted, and for each bot the arena started what it
    wrote last: the first thing its author needs."""
    from arena.server.session import NOT_PLAYED

    text = f"match {match_id} aborted: {reason}"
    for bot in bots:
        text += "\n"
        if reason == NOT_PLAYED:
            text += f"bot {bot.name!r} answered none of its {game} requests"
            if game != "muushig":
                # The usual cause: a Muushig bot, whose hello names no game.
                text += (f" (a Muushig bot? A {game} bot names the game in its hello, "
                         f'"game": "{game}"; arena check-bot --game {game} -- COMMAND '
                         "shows what it gets wrong)")
        else:
            text += f"bot {bot.name!r}"
        text += _last_lines(bot.recent_output or bot.stderr_tail)
        if where is not None:
            text += f"\n  (all of it: {where(bot.name)})"
    return text


def crashed_text(bot: Any, where: Callable[[str], str] | None) -> str:
    text = (f"bot {bot.name!r} exited {bot.crashes} time(s) during the match (last exit code "
            f"{bot.last_exit_code}; autopilot played its seat meanwhile)")
    text += _last_lines(bot.stderr_tail)
    if where is not None:
        text += f"\n  (all of it: {where(bot.name)})"
    return text


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
