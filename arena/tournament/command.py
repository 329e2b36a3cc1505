"""``arena tournament FILE`` and ``arena tournament resume ID``: the terminal side.

Everything an organiser types or reads: options, one-line errors (exit code
2), the progress display, the final standings, where the results stay and
how to serve them, and the revealed deal key.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

import structlog

from arena.live import SERVER_SHUTTING_DOWN
from arena.options import at_least, seconds
from arena.server.config import ServerConfig
from arena.server.local_bots import EntrantCommandError, check_commands
from arena.server.workers import worker_count
from arena.storage.base import NotFoundError, TournamentStatus
from arena.tournament.errors import TournamentError
from arena.tournament.outcome import Outcome, print_interrupted
from arena.tournament.config import (
    DEFAULT_MAX_EXTRA_MATCHES,
    ConfigError,
    TournamentConfig,
    config_from_wire,
    load_config,
)
from protocol.deals import DealKeyError, parse_deal_key

log = structlog.get_logger("arena.tournament")

EXPORT_HELP = ("write the results at the end: a folder receives results.json, "
               "results-standings.csv and results-matches.csv; a name ending in .json or "
               ".csv (e.g. out/cup.json) gives out/cup.json, out/cup.csv and "
               "out/cup-matches.csv")


def add_tournament_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--export", default=None, metavar="TARGET", help=EXPORT_HELP)
    p.add_argument("--keep-serving", action=argparse.BooleanOptionalAction, default=None,
                   help="keep the web server up after the tournament ends, until Ctrl-C "
                        "(default: yes when the output is a terminal)")
    p.add_argument("--until-separated", action="store_true",
                   help="after the schedule, play more deck sets until every bot is "
                        "significantly ahead of the next (docs/tournaments.md), at most "
                        "--max-extra-matches more")
    p.add_argument("--max-extra-matches", type=at_least(1), default=None, metavar="N",
                   help="cap on the matches --until-separated may add "
                        f"(default: {DEFAULT_MAX_EXTRA_MATCHES})")
    p.add_argument("--secret", default=None, metavar="HEX",
                   help="deal from this key (the one a finished tournament revealed) instead "
                        "of a fresh one, to replay its exact decks on a new --db; on several "
                        "nodes, every node gets the same key")
    p.add_argument("--node", default=None, metavar="NAME",
                   help="share the tournament with other nodes on the same --db: this node "
                        "claims slots from the shared queue (default: $ARENA_NODE; without "
                        "a name the tournament is played by this process alone)")
    p.add_argument("--lease", type=seconds(positive=True), default=None, metavar="SECONDS",
                   help="with --node: how long a claimed slot stays this node's without a "
                        "renewal; a dead node's slots are replayed after it "
                        "(default: 30)")
    p.add_argument("--workers", type=worker_count, default=1, metavar="N",
                   help="play on N processes at once, each with its own copies of the "
                        "entrants (every entrant needs a command); the slots are shared as "
                        "between nodes, each played once (default: 1, this process)")


class TournamentCommandError(TournamentError):
    """A mistake of the organiser: printed as lines, exit code 2."""


def _load(args: Any, store: Any) -> tuple[TournamentConfig, Any]:
    from arena.tournament.runner import create_or_load, join_tournament

    secret = parse_deal_key(args.secret) if getattr(args, "secret", None) else None
    if args.config == "resume":
        if not args.resume_id:
            raise TournamentCommandError("give the tournament id: arena tournament resume ID")
        try:
            record = store.get_tournament(args.resume_id)
        except NotFoundError:
            raise TournamentCommandError(f"no tournament {args.resume_id!r} in {args.db}") from None
        config = config_from_wire(record.config)
        check_local_commands(config)
        check_workers(args, config)
        # The key is kept with the store; --secret, if given, must be it.
        return config, _reopened(store, join_tournament(store, record, secret))
    config = load_config(args.config)
    if getattr(args, "until_separated", False) or getattr(args, "max_extra_matches", None):
        extra = args.max_extra_matches
        if config.schedule.rounds is not None:
            raise TournamentCommandError("a Swiss tournament plays its fixed number of rounds; "
                                         "--until-separated does not apply (raise rounds)")
        if config.schedule.challenger is not None:
            raise TournamentCommandError("a gauntlet stops by its own rule; --until-separated "
                                         "does not apply (set max_sets, alpha or effect)")
        if extra is not None and extra < 0:
            raise TournamentCommandError("--max-extra-matches must be 0 or more")
        config = replace(config, schedule=replace(
            config.schedule, until_separated=True,
            max_extra_matches=config.schedule.max_extra_matches if extra is None else extra))
    check_local_commands(config)
    check_workers(args, config)
    record, created = create_or_load(store, config, secret=secret)
    if not created:
        log.info("tournament_resumed", tournament=record.id)
    return config, _reopened(store, record)


def _reopened(store: Any, record: Any) -> Any:
    """Resuming a cancelled tournament is the organiser's explicit wish: it
    is pending again (a runner never revives a cancelled one by itself)."""
    if record.status is TournamentStatus.CANCELLED and store.reopen_tournament(record.id):
        print(f"tournament {record.id} was cancelled; resuming it", flush=True)
        return store.get_tournament(record.id)
    return record


def check_workers(args: Any, config: TournamentConfig) -> None:
    """What ``--workers N`` needs of the tournament, checked before it is created."""
    if args_workers(args) == 1:
        return
    hosted = [e.name for e in config.entrants if e.hosted]
    if hosted:
        raise TournamentCommandError(
            f"--workers needs a command for every entrant; {', '.join(hosted)} are hosted "
            "versions, started in a sandbox for each match by one process: play this "
            "tournament without --workers")
    remote = [e.name for e in config.entrants if e.command is None]
    if remote:
        raise TournamentCommandError(
            f"--workers needs a command for every entrant; {', '.join(remote)} connect(s) "
            "over the network, and a remote bot is one connection that one process must "
            "hold for all its matches: play this tournament without --workers")
    if config.schedule.until_separated:
        raise TournamentCommandError("--until-separated decides after each deck set which "
                                     "slots to play: run it without --workers")


def check_local_commands(config: TournamentConfig) -> None:
    check_commands([(e.name, list(e.command), e.cwd) for e in config.entrants
                    if e.command is not None])


def _keep_serving(args: Any) -> bool:
    wanted = getattr(args, "keep_serving", None)
    return sys.stdout.isatty() if wanted is None else bool(wanted)


async def run_tournament_command(args: Any, base: ServerConfig,
                                 make_arena: Callable[[ServerConfig, Any, Any], Any]) -> int:
    """``make_arena(config, store, hub)`` builds the application (``arena.app.Arena``;
    ``hub`` None or the live hub bridged to other nodes):
    the CLI composes it, so this module needs nothing above the tournament."""
    from arena.storage import open_store
    from arena.tournament.export import export_standings
    from arena.tournament.runner import standings_rows
    from arena.tournament.progress import ProgressDisplay, render_table
    from arena.tournament.gauntlet_play import gauntlet_lines, gauntlet_result

    node = node_name(args)
    store = open_store(args.db, node=node)
    bridge = None
    try:
        try:
            config, record = _load(args, store)
        except ConfigError:
            raise  # the CLI names its file
        except (TournamentError, EntrantCommandError, DealKeyError) as exc:
            for line in str(exc).splitlines():
                print(f"arena tournament: {line}", file=sys.stderr)
            return 2
        limits = config.limits
        server_config = ServerConfig(**{**base.__dict__, "decision_ms": limits.decision_ms,
                                        "bank_ms": limits.bank_ms, "game": config.game,
                                        "matchmaking": False})
        hub, bridge = await start_bridge(args.db, node)
        workers = args_workers(args)  # checked by _load
        if workers > 1 and hub is None:
            from arena.live_bridge import BridgedHub

            hub = BridgedHub(publish_own=False)  # it hears the workers' matches
        arena = make_arena(server_config, store, hub)
        server = arena.server
        if any(e.hosted for e in config.entrants):  # their stored versions play here
            arena.host_versions(args.db, getattr(args, "hosted_seats", None))
        await arena.start()
        page = (f"http://{server_config.host}:{arena.http_port}/tournaments/{record.id}"
                if arena.http_port else None)
        print(f"tournament {record.id}: {config.name}"
              + (f" — standings on {page}" if page else ""), flush=True)
        display = ProgressDisplay(title=config.name)
        loop = asyncio.get_running_loop()
        if workers > 1:
            from arena.tournament.on_workers import play_on_workers

            outcome = await play_on_workers(arena, config, record, workers=workers,
                                            node=node, lease_s=args_lease(args),
                                            display=display, db=args.db,
                                            relay=bridge is not None)
            if outcome is None:  # the workers could not start (said on stderr)
                await arena.stop()
                return 2
        else:
            try:
                runner = new_runner(server, config, record, node=node, lease_s=args_lease(args),
                                    on_progress=display.update,
                                    hosted=getattr(arena, "hosted_bots", None))
            except (TournamentError, TournamentCommandError) as exc:
                await arena.stop()
                print(f"arena tournament: {exc}", file=sys.stderr)
                return 2
            outcome = await _play_here(runner, display, record, args.db, loop)
        complete = outcome.complete
        rows = standings_rows(store, record.id)
        print(render_table(rows))
        if outcome.stopped_separated:
            print("every bot is significantly ahead of the next: the reserve deck sets "
                  "were not needed")
        for line in outcome.faults:
            print(f"fault: {line}")
        gauntlet = gauntlet_result(store, config, record.id)
        for line in gauntlet_lines(gauntlet):
            print(line)
        if complete:
            print(f"deal key (revealed now that the tournament is over): "
                  f"{outcome.deal_key.hex()}\n  check every deck: arena verify {record.id} "
                  f"--db {args.db}")
        if args.export:
            for path in export_standings(rows, Path(args.export), store=store,
                                         tournament_id=record.id,
                                         meta={"gauntlet": gauntlet} if gauntlet else None):
                print(f"exported {path}")
        if complete and page and _keep_serving(args):
            stop_serving = asyncio.Event()
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.add_signal_handler(sig, stop_serving.set)
            print(f"serving the results on {page} (Ctrl-C to stop)", flush=True)
            await stop_serving.wait()
        elif record.id and store.get_tournament(record.id).status is TournamentStatus.FINISHED:
            print(f"results are stored in {args.db}; to see them on the web: "
                  f"arena serve --db {args.db}  then open "
                  f"http://127.0.0.1:8080/tournaments/{record.id}")
        await arena.stop()
        return 0 if complete else 1
    finally:
        if bridge is not None:
            await bridge.stop()
        store.close()


async def _play_here(runner: Any, display: Any, record: Any, db: str,
                     loop: asyncio.AbstractEventLoop) -> Outcome:
    task = asyncio.create_task(runner.run())

    def interrupt() -> None:
        # The process is stopping: its tables' matches end aborted as such.
        runner.server.mark_cancelled(SERVER_SHUTTING_DOWN)
        task.cancel()

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, interrupt)
    try:
        with display:
            complete = await task
    except asyncio.CancelledError:
        complete = False
        print_interrupted(record.id, db)
    return Outcome(complete, runner.deal_key, runner.faults_summary(), runner.stopped_separated)


def args_workers(args: Any) -> int:
    workers = getattr(args, "workers", None)
    if workers is None:
        return 1
    if workers < 1:
        raise TournamentCommandError("--workers must be 1 or more")
    return workers


def node_name(args: Any) -> str | None:
    import os

    from arena.storage import NODE_ENV

    return getattr(args, "node", None) or os.environ.get(NODE_ENV) or None


def args_lease(args: Any) -> float | None:
    lease = getattr(args, "lease", None)
    if lease is not None and not lease > 0:
        raise TournamentCommandError("--lease must be more than 0 seconds")
    return lease


def new_runner(server: Any, config: TournamentConfig, record: Any, *, node: str | None,
               lease_s: float | None = None, **kwargs: Any) -> Any:
    """The runner of this process: the shared queue with a node name, else
    the single-process runner."""
    from arena.tournament.runner import TournamentRunner

    if node is None:
        return TournamentRunner(server, config, record, **kwargs)
    from arena.tournament.shared import DEFAULT_LEASE_S, QueueSettings, SharedTournamentRunner

    lease = lease_s if lease_s is not None else DEFAULT_LEASE_S
    return SharedTournamentRunner(server, config, record, **kwargs, queue=QueueSettings(
        node=node, lease_s=lease, poll_s=min(1.0, lease / 10)))


async def start_bridge(db: str, node: str | None) -> tuple[Any, Any]:
    """(hub, bridge): on PostgreSQL with a node name, a hub bridged to the
    other nodes' (arena/live_bridge.py); else a plain hub and no bridge."""
    from arena.storage import is_postgres_url

    if node is None or not is_postgres_url(db):
        return None, None
    from arena.live_bridge import BridgedHub, LiveBridge

    hub = BridgedHub()
    bridge = LiveBridge(hub, db, node)
    await bridge.start()
    return hub, bridge
