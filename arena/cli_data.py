"""``arena export``, ``arena replay``, ``arena view`` and ``arena match --output``:
matches as files (docs/notation.md, docs/dataset.md).

Every read of a match goes through the web's rules of what is public
(:class:`arena.web.queries.Queries`), so a file never holds more than the
match page shows.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from arena.cli_errors import CommandFailed, UserError


def add_data_commands(sub: Any, add: Callable[..., argparse.ArgumentParser]) -> None:
    """Register the commands; ``add(sub, name, **kwargs)`` is the CLI's maker."""
    p = add(sub, "export", help="write a match as notation or JSON, or a whole dataset",
            description="Write one public match as text notation or JSON, or (--dataset) "
                        "every public finished match as compressed JSON Lines.")
    p.add_argument("match", nargs="?", help="the match id (not with --dataset)")
    p.add_argument("--format", choices=["notation", "json"], default="notation",
                   help="one match as notation (docs/notation.md) or as a JSON record")
    p.add_argument("--output", "-o", default=None, metavar="FILE",
                   help="write here instead of standard output")
    p.add_argument("--dataset", default=None, metavar="DIR",
                   help="write every public finished match into DIR as <game>.jsonl.gz")
    p.add_argument("--game", default=None, help="with --dataset: only this game")
    p.add_argument("--tournament", default=None, help="with --dataset: only this tournament")
    p.add_argument("--after", default=None, metavar="DATE",
                   help="with --dataset: finished on or after DATE (YYYY-MM-DD or ISO time, UTC)")
    p.add_argument("--before", default=None, metavar="DATE",
                   help="with --dataset: finished before DATE")
    p.add_argument("--db", default="arena.db", help="the store (default: %(default)s)")
    p.set_defaults(func=run_export)

    p = add(sub, "replay", help="check a notation file against the rules and its commitments",
            description="Re-play a notation file through the game's engine: prints 'valid', "
                        "or the first line that breaks a rule or a deal commitment (exit 1).")
    p.add_argument("file", help="a notation file (arena export MATCH, arena match --output)")
    p.set_defaults(func=run_replay)

    p = add(sub, "view", help="show a match file in the replay viewer on a local port",
            description="Serve the web replay of a notation or JSON Lines file on a local "
                        "port; no database or server needed. Ctrl-C stops it.")
    p.add_argument("file", help="a notation (.txt) or JSON Lines (.jsonl) match file")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: %(default)s)")
    p.add_argument("--port", type=int, default=0, help="port (default: a free one)")
    p.set_defaults(func=run_view)
    _add_match_output(sub)


# -- one match -------------------------------------------------------------------------
def _detail(store: Any, match_id: str) -> dict[str, Any]:
    from arena.live import LiveHub
    from arena.storage.base import NotFoundError
    from arena.web.queries import Queries

    queries = Queries(store, LiveHub())
    try:
        return queries.match_detail(match_id)
    except NotFoundError:
        raise UserError(f"no match {match_id!r} in this store") from None
    finally:
        queries.close()


def _deal_key(store: Any, match_id: str) -> tuple[str | None, str | None]:
    """The match's revealed deal key and table, when it has one that checks."""
    from arena.storage.deal_keys import LADDER_TABLE
    from arena.tournament.verify import verify_match

    report = verify_match(store, match_id)
    if not report.ok or report.key_hex is None:
        return None, None
    record = store.get_match(match_id)
    return report.key_hex, (record.seed or "") if record.tournament_id else LADDER_TABLE


def match_text(store: Any, match_id: str, fmt: str) -> str:
    from arena.dataset import NotPublicError, match_record, notation_of

    detail = _detail(store, match_id)
    try:
        if fmt == "json":
            return json.dumps(match_record(detail), separators=(",", ":")) + "\n"
        key, table = _deal_key(store, match_id)
        return notation_of(detail, deal_key=key, deal_table=table)
    except NotPublicError as exc:
        raise CommandFailed(str(exc)) from None


def _date(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        at = datetime.fromisoformat(text)
    except ValueError:
        raise UserError(f"{text!r} is not a date (YYYY-MM-DD or an ISO time)") from None
    return (at if at.tzinfo else at.replace(tzinfo=timezone.utc)).timestamp()


def run_export(args: argparse.Namespace) -> int:
    from arena.storage import open_store, require_existing_store

    if (args.match is None) == (args.dataset is None):
        raise UserError("give a match id, or --dataset DIR")
    require_existing_store(args.db, hint="export reads an existing store")
    store = open_store(args.db)
    try:
        if args.dataset is not None:
            return _export_dataset(store, args)
        text = match_text(store, args.match, args.format)
    finally:
        store.close()
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        print(text, end="")
    return 0


def _export_dataset(store: Any, args: argparse.Namespace) -> int:
    from arena.dataset import Selection, export_dataset
    from arena.live import LiveHub
    from arena.web.queries import Queries

    selection = Selection(game=args.game, tournament_id=args.tournament,
                          after=_date(args.after), before=_date(args.before))
    queries = Queries(store, LiveHub())
    started = time.monotonic()
    try:
        report = export_dataset(store, queries.match_detail, Path(args.dataset), selection)
    finally:
        queries.close()
    seconds = max(time.monotonic() - started, 1e-9)
    files = ", ".join(f"{name} ({n})" for name, n in report.files.items()) or "no file"
    print(f"{report.matches} matches in {seconds:.1f} s ({report.matches / seconds:.0f}/s): "
          f"{files} in {report.directory}"
          + (f"; {report.withheld} withheld until their rotations are played"
             if report.withheld else ""))
    return 0


# -- replay and view ---------------------------------------------------------------------
def _read(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise UserError(f"cannot read {path}: {exc.strerror}") from None


def run_replay(args: argparse.Namespace) -> int:
    from arena.notation import NotationError, parse_notation, replay_notation

    try:
        replayed = replay_notation(parse_notation(_read(args.file)))
    except NotationError as exc:
        raise CommandFailed(f"{args.file}: {exc}") from None
    print(replayed.summary())
    return 0


def run_view(args: argparse.Namespace) -> int:
    from arena.match_files import load_match_file

    text = _read(args.file)
    try:
        records = load_match_file(text)
    except ValueError as exc:
        raise CommandFailed(f"{args.file}: {exc}") from None
    return asyncio.run(_serve(records, args.host, args.port))


async def _serve(records: list[Any], host: str, port: int) -> int:
    from aiohttp import web

    from arena.live import LiveHub
    from arena.match_files import store_records
    from arena.metrics import Metrics
    from arena.storage import open_store
    from arena.web.app import make_app

    store = open_store(":memory:")
    try:
        ids = store_records(store, records)
        runner = web.AppRunner(make_app(store, hub=LiveHub(), metrics=Metrics()),
                               access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, host, port)
        await site.start()
        bound = runner.addresses[0][1]
        for match_id in ids:
            print(f"http://{host}:{bound}/matches/{match_id}", flush=True)
        try:
            await asyncio.Event().wait()
        finally:
            await runner.cleanup()
    finally:
        store.close()
    return 0


# -- arena match --output --------------------------------------------------------------
def _add_match_output(sub: Any) -> None:
    """``--output FILE`` on ``arena match``: the match is played into a store
    (a temporary file when none is given), then written out as notation, or
    as a JSON record when FILE ends in .jsonl or .json."""
    match = sub.choices.get("match")
    if match is None:
        return
    match.add_argument("--output", default=None, metavar="FILE",
                       help="also write the match to FILE: notation, or a JSON Lines "
                            "record when FILE ends in .jsonl (view it with arena view FILE)")
    play = match.get_default("func")

    def play_and_write(args: argparse.Namespace) -> int:
        if args.output is None:
            return int(play(args) or 0)
        with tempfile.TemporaryDirectory(prefix="arena-match-") as folder:
            if args.db == ":memory:":
                args.db = str(Path(folder) / "match.db")
            before = _match_ids(args.db)
            code = int(play(args) or 0)
            if code == 0:
                _write_new_match(args.db, before, args.output)
            return code

    match.set_defaults(func=play_and_write)


def _match_ids(location: str) -> set[str]:
    from arena.storage import open_store

    if not location.startswith("postgres") and not Path(location).exists():
        return set()
    store = open_store(location)
    try:
        return {m.id for m in store.list_matches(limit=1000)}
    finally:
        store.close()


def _write_new_match(location: str, before: set[str], output: str) -> None:
    from arena.storage import open_store

    store = open_store(location)
    try:
        new = [m.id for m in store.list_matches(limit=50) if m.id not in before]
        if not new:
            raise CommandFailed("the match was not stored; nothing to write")
        fmt = "json" if output.endswith((".jsonl", ".json")) else "notation"
        Path(output).write_text(match_text(store, new[0], fmt), encoding="utf-8")
    finally:
        store.close()
