"""Commands that read or change a store never create one: a typo in ``--db``
(a file that is not there, a database without the arena's tables) gets one
line naming the location and exit code 2, and leaves nothing behind."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from arena.cli import main
from arena.storage import (
    NoStoreError, StorageError, is_postgres_url, open_store, require_existing_store,
)

# Every command that must find the store it is given, as (argv before --db).
READERS = {
    "tournament cancel": ["tournament", "cancel", "cup"],
    "tournament resume": ["tournament", "resume", "cup"],
    "verify": ["verify", "cup"],
    "verify --match": ["verify", "--match", "m1"],
    "export": ["export", "m1"],
    "bots list": ["bots", "list"],
    "bots remove": ["bots", "remove", "ann"],
}


def _tables(location: str) -> list[str]:
    """The tables at a location, looked at without creating anything."""
    if is_postgres_url(location):
        import psycopg

        with psycopg.connect(location, autocommit=True) as conn:
            rows = conn.execute("SELECT tablename FROM pg_tables "
                                "WHERE schemaname = current_schema()").fetchall()
        return sorted(r[0] for r in rows)
    if not Path(location).exists():
        return []
    conn = sqlite3.connect(location)
    try:
        rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    finally:
        conn.close()
    return sorted(r[0] for r in rows)


def test_a_location_without_a_store_is_refused_and_left_as_it_was(db_location):
    with pytest.raises(NoStoreError, match="no arena store"):
        require_existing_store(db_location, hint="check --db")
    assert _tables(db_location) == []
    if not is_postgres_url(db_location):
        assert not Path(db_location).exists()


def test_a_store_once_made_is_found(db_location):
    open_store(db_location).close()
    require_existing_store(db_location)  # no error


def test_a_sqlite_file_of_another_program_is_refused_untouched(tmp_path):
    other = tmp_path / "notes.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE notes (text TEXT)")
    conn.commit()
    conn.close()
    before = other.read_bytes()
    with pytest.raises(NoStoreError, match="no arena tables"):
        require_existing_store(str(other))
    assert other.read_bytes() == before and _tables(str(other)) == ["notes"]


def test_a_file_that_is_not_a_database_is_refused(tmp_path):
    junk = tmp_path / "arena.db"
    junk.write_text("not a database at all, " * 100)
    with pytest.raises(NoStoreError, match="not an arena store"):
        require_existing_store(str(junk))


def test_an_unreachable_database_server_is_a_storage_error():
    with pytest.raises(StorageError, match="cannot reach"):
        require_existing_store("postgresql://nobody@127.0.0.1:1/none?connect_timeout=5")


@pytest.mark.parametrize("command", list(READERS))
def test_a_command_refuses_a_missing_store_without_creating_it(command, db_location, capsys):
    assert main([*READERS[command], "--db", db_location]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "no arena store" in err
    assert _tables(db_location) == []
    if not is_postgres_url(db_location):
        assert not Path(db_location).exists() and Path(db_location).name in err


def test_copy_refuses_a_missing_source_without_creating_it(tmp_path, db_location, capsys):
    missing = tmp_path / "typo.db"
    assert main(["db", "copy", str(missing), db_location]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "typo.db" in err and "no arena store" in err
    assert not missing.exists() and _tables(db_location) == []
