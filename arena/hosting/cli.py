"""``arena bots submit | versions | build-log`` and ``arena serve --hosted``."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import time
from pathlib import Path
from typing import Any, Iterator

from arena.hosting.builder import build, submit
from arena.hosting.errors import HostingError
from arena.hosting.legacy import import_legacy
from arena.hosting.presets import LANGS
from arena.hosting.queue import UploadLimits
from arena.hosting.seats import (ENTRANT_SEAT_WAIT_S, SEAT_GIVE_UP_S, SEAT_LEASE_S,
                                 SeatSettings)
from arena.hosting.service import build_cache
from arena.hosting.versions import VersionStore
from arena.options import at_least, seconds
from arena.storage.base import StorageError


def add_bot_commands(bots_sub: argparse._SubParsersAction, add: Any) -> None:
    """``add(sub, name, **kwargs)`` is the CLI's subcommand maker (shared options)."""
    p = add(bots_sub, "submit", help="upload a bot's code as a new version and build it",
                            description="Store a source file or an archive (.zip, .tar.gz) as "
                                        "the next version of NAME and build it in the sandbox.")
    p.add_argument("name", help="a registered bot")
    p.add_argument("path", help="a source file, a .zip or a .tar.gz")
    p.add_argument("--lang", choices=LANGS, default=None,
                   help="language preset (default: guessed from the files)")
    p.add_argument("--db", default="arena.db", help="the arena's store (default: %(default)s)")
    p.add_argument("--no-build", action="store_true", help="only store it; a server builds it")
    p.set_defaults(func=cmd_submit)
    p = add(bots_sub, "versions", help="list a hosted bot's versions and build status")
    p.add_argument("name", help="a registered bot")
    p.add_argument("--db", default="arena.db", help="the arena's store (default: %(default)s)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_versions)
    p = add(bots_sub, "build-log", help="print a version's build log")
    p.add_argument("name", help="a registered bot")
    p.add_argument("--version", type=at_least(1), default=None, help="default: the newest")
    p.add_argument("--db", default="arena.db", help="the arena's store (default: %(default)s)")
    p.set_defaults(func=cmd_build_log)


def add_serve_options(serve: argparse.ArgumentParser) -> None:
    serve.add_argument("--hosted", action="store_true",
                       help="run submitted bots in sandboxes and keep them playing on the ladder")
    serve.add_argument("--ladder-interval", type=seconds(positive=True), default=2.0, metavar="S",
                       help="with --hosted: start a ladder match at most every S seconds "
                            "(default: %(default)s)")
    serve.add_argument("--ladder-tables", type=at_least(1), default=2, metavar="N",
                       help="with --hosted: ladder matches at once (default: %(default)s)")
    add_seat_options(serve)


def add_seat_options(parser: argparse.ArgumentParser) -> None:
    """The hosted bots' seat times an organiser may set (docs/hosting.md)."""
    parser.add_argument("--entrant-seat-wait", type=seconds(), default=ENTRANT_SEAT_WAIT_S,
                        metavar="S", help="a hosted tournament entrant whose bot plays a "
                                          "ladder match on another node waits up to S "
                                          "seconds for it to end (default: %(default)g)")
    parser.add_argument("--seat-give-up", type=seconds(positive=True), default=SEAT_GIVE_UP_S,
                        metavar="S", help="a node that could not renew a hosted bot's seat "
                                          "for S seconds stops the bot's run and gives the "
                                          f"seat up; below the {SEAT_LEASE_S:g} s lease "
                                          "(default: %(default)g)")


def seat_settings(args: argparse.Namespace) -> SeatSettings:
    """The seat times of ``add_seat_options``, checked together; raises
    :class:`HostingSettingsError` with what to change."""
    return SeatSettings(give_up_s=args.seat_give_up, entrant_wait_s=args.entrant_seat_wait)


@contextlib.contextmanager
def _versions(db: str) -> Iterator[VersionStore]:
    """The versions in the store at ``db`` (its build cache on this machine).
    These commands work on a store that exists: a ``--db`` naming none (a
    typo, an empty database, someone else's file) is refused untouched."""
    from arena.storage import open_store, require_existing_store

    require_existing_store(db, hint=f"check --db, or create the store with "
                                    f"'arena bots add NAME --db {db}'")
    store = open_store(db)
    try:
        versions = VersionStore(store, build_cache(db))
        import_legacy(versions)  # what an older arena kept as files, once
        yield versions
    finally:
        store.close()


def _registered(versions: VersionStore, name: str) -> None:
    bot = versions.store.get_bot(name)
    if bot is None or bot.removed:
        raise HostingError(f"no bot named {name!r}: register it first with 'arena bots add {name}'")


def cmd_submit(args: argparse.Namespace) -> int:
    try:
        path = Path(args.path)
        with _versions(args.db) as versions:
            _registered(versions, args.name)
            if not path.is_file():
                raise HostingError(f"no file {args.path!r}")
            version = submit(versions, args.name, path.read_bytes(), path.name, lang=args.lang)
            versions.prune(args.name, keep=UploadLimits().versions_kept)
            if not args.no_build:
                version = asyncio.run(build(versions, version))
    except (HostingError, StorageError) as exc:
        print(f"arena bots submit: {exc}", file=sys.stderr)
        return 2
    print(f"{args.name} v{version.version}: {version.status.value}"
          + (f" ({version.reason})" if version.reason else ""))
    return 0 if version.status.value != "failed" else 1


def cmd_versions(args: argparse.Namespace) -> int:
    try:
        with _versions(args.db) as store:
            versions = store.versions(args.name)
    except (HostingError, StorageError) as exc:
        print(f"arena bots versions: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps([v.to_wire() for v in versions], indent=1))
        return 0
    if not versions:
        print(f"{args.name} has no versions: submit one with 'arena bots submit {args.name} PATH'")
        return 0
    for v in versions:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(v.created_at))
        print(f"v{v.version}\t{v.status.value}\t{v.lang or '?'}\t{when}\t{len(v.matches)} matches"
              + (f"\t{v.reason}" if v.reason else ""))
    return 0


def cmd_build_log(args: argparse.Namespace) -> int:
    try:
        with _versions(args.db) as store:
            versions = store.versions(args.name)
            if not versions:
                raise HostingError(f"{args.name} has no versions")
            number = args.version or versions[-1].version
            sys.stdout.write(store.build_log(args.name, number))
    except (HostingError, StorageError) as exc:
        print(f"arena bots build-log: {exc}", file=sys.stderr)
        return 2
    return 0
