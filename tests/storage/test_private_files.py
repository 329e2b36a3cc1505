"""What the arena writes to disk is readable by its owner alone.

The database holds the decks of running matches, the deal-key folder the
keys that derive every deck of a tournament, the bot-log folders what bots
printed: created 0600 (files) and 0700 (folders) whatever the umask lets
through, and an older store's looser files are tightened when it is opened.

Seen before: ``arena.db`` was created 0644, readable by every local user.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Iterator

import pytest

from arena.server.local_bots import LogRouter, bot_log_path
from arena.storage.deal_keys import KEYS_DIR, LADDER_FILE, DealKeyring
from arena.storage.sqlite import SqliteStore


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture(autouse=True)
def usual_umask() -> Iterator[None]:
    previous = os.umask(0o022)  # the common default, which lets others read
    try:
        yield
    finally:
        os.umask(previous)


def test_a_new_database_and_its_wal_files_are_for_the_owner_only(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    store = SqliteStore(db)
    try:
        store.add_bot("somebody", "hash-of-a-token")  # a write: the WAL and SHM exist now
        for path in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
            assert path.exists(), path
            assert mode(path) == 0o600, (path, oct(mode(path)))
    finally:
        store.close()


def test_an_older_database_made_readable_by_others_is_tightened_on_open(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    SqliteStore(db).close()
    os.chmod(db, 0o644)
    store = SqliteStore(db)
    try:
        assert mode(db) == 0o600
    finally:
        store.close()


def test_the_deal_key_folder_and_its_files_are_for_the_owner_only(tmp_path: Path) -> None:
    keyring = DealKeyring(tmp_path)
    keyring.create("cup")
    keyring.record_ladder_key("m1", bytes(32))
    folder = tmp_path / KEYS_DIR
    assert mode(folder) == 0o700
    assert mode(folder / "cup.key") == 0o600
    assert mode(folder / LADDER_FILE) == 0o600


def test_bot_log_folders_and_files_are_for_the_owner_only(tmp_path: Path) -> None:
    logs = tmp_path / "bot-logs"
    LogRouter(logs, "alice", lambda: ["m1"]).write(b"thinking...\n")
    path = bot_log_path(logs, "alice", "m1")
    assert path.read_bytes() == b"thinking...\n"
    assert mode(logs) == 0o700 and mode(path.parent) == 0o700
    assert mode(path) == 0o600
