"""``arena db migrate`` and ``arena db copy SRC DST``.

``migrate`` brings a store's schema up to date (opening a store does that
too; the command says what it did, for an upgrade done on purpose).

``copy`` moves an arena between stores, typically an existing SQLite file
to a new PostgreSQL database: every row of every table, read from one
snapshot of the source and written in ONE transaction of the destination,
so a failed copy leaves the destination as empty as it was. The destination
must be empty. Afterwards both stores are read again and compared table by
table (row counts and a digest of every row); a difference is an error.

What lives beside the tables is carried too (:func:`copy_beside`): every
tournament's deal key, from wherever the source keeps it to wherever the
destination does (files beside a SQLite file, the ``deal_keys`` table of a
database server); the ladder's revealed keys and the bot logs, beside a
SQLite file, are copied to the folder of a SQLite destination. A
destination without a folder (a database server) has no place for those:
the command names each one it left behind. Hosted bots' versions (their
uploads, records and logs) are tables like any other and copied with them;
the ``hosted/`` folder beside a SQLite file is only that node's build cache
and is not copied (a node builds what it lacks from the stored uploads).
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import structlog

from arena.storage import open_store
from arena.storage.base import StorageError
from arena.storage.deal_keys import KEYS_DIR, LADDER_FILE, DealKeyring, store_directory
from arena.storage.existing import NoStoreError, require_existing_store
from arena.storage.schema import COPIED_TABLES, SCHEMA_VERSION
from arena.storage.store import SqlStore

log = structlog.get_logger(__name__)

CHUNK_ROWS = 1000


class CopyMismatchError(StorageError):
    """The destination does not hold exactly what the source holds."""


class DestinationNotEmptyError(StorageError):
    """``arena db copy`` writes only into an empty store."""


@dataclass(frozen=True)
class TableCopy:
    table: str
    source_rows: int
    copied_rows: int
    digest: str  # of the source's rows, equal to the destination's after checking


def _select(table: str, columns: tuple[str, ...], order: str) -> str:
    return f"SELECT {', '.join(columns)} FROM {table} ORDER BY {order}"


def _chunks(db: Any, sql: str) -> Iterator[list[tuple[Any, ...]]]:
    cursor = db.execute(sql)
    while True:
        rows = cursor.fetchmany(CHUNK_ROWS)
        if not rows:
            return
        yield [tuple(row) for row in rows]


def table_digests(store: SqlStore) -> dict[str, tuple[int, str]]:
    """Per table: (row count, digest of its rows), from one snapshot.

    The digest is the sum of the rows' SHA-256 values: independent of row
    order, so the two backends' collations cannot make equal tables differ."""
    out: dict[str, tuple[int, str]] = {}
    with store.db.read() as db:
        for table, columns, _ in COPIED_TABLES:
            total = count = 0
            for rows in _chunks(db, f"SELECT {', '.join(columns)} FROM {table}"):
                for row in rows:
                    total += int.from_bytes(hashlib.sha256(repr(row).encode()).digest(), "big")
                count += len(rows)
            out[table] = (count, f"{total % (1 << 256):064x}")
    return out


def _is_empty(store: SqlStore) -> bool:
    with store.db.read() as db:
        return all(db.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchone() is None
                   for table, _, _ in COPIED_TABLES)


def copy_store(source: SqlStore, destination: SqlStore) -> list[TableCopy]:
    """Copy everything from ``source`` into the empty ``destination`` and
    check the result; raises DestinationNotEmptyError or CopyMismatchError."""
    if not _is_empty(destination):
        raise DestinationNotEmptyError(
            f"{destination.db.where} already holds an arena; copy only into an empty store "
            "(create a new database, or delete the file)")
    copied: dict[str, int] = {}
    with source.db.read() as src, destination.db.tx(durable=True) as dst:
        for table, columns, order in COPIED_TABLES:
            insert = (f"INSERT INTO {table} ({', '.join(columns)}) VALUES "
                      f"({', '.join('?' for _ in columns)})")
            copied[table] = 0
            for rows in _chunks(src, _select(table, columns, order)):
                dst.executemany(insert, rows)
                copied[table] += len(rows)
            log.info("storage.copied_table", table=table, rows=copied[table])
    before, after = table_digests(source), table_digests(destination)
    report = [TableCopy(table, before[table][0], copied[table], before[table][1])
              for table, _, _ in COPIED_TABLES]
    differ = [t for t, _, _ in COPIED_TABLES if before[t] != after[t]]
    if differ:
        raise CopyMismatchError(
            "the copy differs from the source in " + ", ".join(
                f"{t} ({before[t][0]} rows, {after[t][0]} copied)" for t in differ)
            + "; the source is unchanged, drop the destination and copy again")
    return report


# Folders beside a SQLite file that belong to its arena (besides deal keys).
BESIDE_FOLDERS = (("bot-logs", "bot logs"),)
# Where a node on a database server looks for each, for the left-behind lines.
HINTS = {
    "bot-logs": "a node on a database server writes its bot logs to a temporary folder; "
                "keep this one as an archive",
    f"{KEYS_DIR}/{LADDER_FILE}": "an in-memory store keeps no ladder keys; keep this file "
                                 "to verify those matches against the old store",
}


@dataclass
class BesideCopy:
    """What :func:`copy_beside` carried and what it had to leave behind."""

    keys: int = 0
    copied: list[str] = field(default_factory=list)
    left_behind: list[str] = field(default_factory=list)


def copy_beside(source: SqlStore, destination: SqlStore) -> BesideCopy:
    """Carry deal keys and the folders beside the source's file (see the
    module text); never overwrites anything in the destination."""
    out = BesideCopy()
    src_keys, dst_keys = DealKeyring.for_store(source), DealKeyring.for_store(destination)
    for record in source.list_tournaments():
        key = src_keys.load(record.id)
        if key is not None:
            dst_keys.create(record.id, key)  # refuses a different key kept there
            out.keys += 1
    if src_keys.table is not None or dst_keys.table is not None:
        # A database server keeps ladder keys in its table: carried key by
        # key (between two SQLite files the ladder file is copied below).
        for match_id, key in src_keys.ladder_entries():
            dst_keys.record_ladder_key(match_id, key)
            out.keys += 1
    src_dir, dst_dir = store_directory(source), store_directory(destination)
    if dst_keys.directory is None and dst_keys.table is None and out.keys:
        out.left_behind.append(f"{out.keys} deal key(s): an in-memory destination keeps "
                               "none beyond this process")
    if src_dir is None:
        return out
    folders = [(f"{KEYS_DIR}/{LADDER_FILE}", "ladder matches' revealed keys"), *BESIDE_FOLDERS]
    for name, what in folders:
        origin = src_dir / name
        if not origin.exists() or src_dir == dst_dir or (
                name.endswith(LADDER_FILE) and dst_keys.table is not None):
            continue
        if dst_dir is None:
            hint = HINTS.get(name, "a database server keeps no files")
            out.left_behind.append(f"{what}: {origin} ({hint})")
            continue
        target = dst_dir / name
        if target.exists():
            out.left_behind.append(f"{what}: {origin} ({target} exists already)")
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if origin.is_dir():
            shutil.copytree(origin, target)
        else:
            shutil.copy2(origin, target)
        out.copied.append(f"{what}: {target}")
    return out


# -- the command ------------------------------------------------------------------------

def add_db_arguments(db: argparse.ArgumentParser) -> None:
    """``arena db migrate --db LOCATION`` and ``arena db copy SRC DST``."""
    sub = db.add_subparsers(dest="db_command")
    migrate = sub.add_parser("migrate", help="bring a store's schema up to date")
    migrate.add_argument("--db", default="arena.db",
                         help="SQLite file or postgresql://user@host/dbname")
    copy = sub.add_parser("copy", help="copy every bot, match and tournament into an "
                                       "empty store (e.g. SQLite to PostgreSQL)")
    copy.add_argument("src", help="the store to copy (left unchanged)")
    copy.add_argument("dst", help="an empty store: a new SQLite file or PostgreSQL database")
    db.set_defaults(func=run_db_command)


def _open(location: str) -> SqlStore:
    store = open_store(location)
    if not isinstance(store, SqlStore):  # pragma: no cover - every backend is one today
        store.close()
        raise StorageError(f"{location}: not a SQL store")
    return store


def run_db_command(args: argparse.Namespace) -> int:
    try:
        if args.db_command == "migrate":
            store = _open(args.db)
            try:
                old = store.migrated_from
                if old == SCHEMA_VERSION:
                    print(f"{store.db.where}: schema version {SCHEMA_VERSION}, up to date")
                else:
                    print(f"{store.db.where}: schema version {old} -> {SCHEMA_VERSION}")
            finally:
                store.close()
            return 0
        if args.db_command == "copy":
            if args.src == args.dst:
                print("arena db copy: source and destination are the same", file=sys.stderr)
                return 2
            # The source is read, never made: a typo must not copy an empty store.
            require_existing_store(args.src, hint="check the source (the store to copy)")
            source = _open(args.src)
            try:
                destination = _open(args.dst)
                try:
                    report = copy_store(source, destination)
                    beside = copy_beside(source, destination)
                finally:
                    destination.close()
            finally:
                source.close()
            for entry in report:
                print(f"{entry.table}\t{entry.copied_rows} rows")
            print(f"deal keys\t{beside.keys} kept{DealKeyring.for_store(destination).where}")
            for line in beside.copied:
                print(f"copied {line}")
            print(f"copied {args.src} -> {destination.db.where}: every table checked")
            for line in beside.left_behind:
                print(f"left behind: {line}")
            return 0
    except NoStoreError as exc:
        print(f"arena db {args.db_command}: {exc}", file=sys.stderr)
        return 2
    except StorageError as exc:
        print(f"arena db {args.db_command}: {exc}", file=sys.stderr)
        return 1
    print("arena db: say 'migrate' or 'copy SRC DST'", file=sys.stderr)
    return 2
