"""SQLite specifics: the file, WAL, the read pool, query plans."""

from __future__ import annotations

import sqlite3

import pytest

from arena.storage import open_store
from arena.storage.base import StorageError
from arena.storage.postgres import PostgresStore
from arena.storage.sqlite import SCHEMA_VERSION, SqliteStore

from .helpers import read_while_writing


def test_file_store_uses_wal_foreign_keys_and_a_schema_version(tmp_path):
    s = SqliteStore(tmp_path / "sub" / "arena.db")  # missing folders are created
    try:
        assert s.schema_version() == SCHEMA_VERSION
        raw = sqlite3.connect(tmp_path / "sub" / "arena.db")
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert raw.execute("SELECT version FROM schema_version").fetchall() == [(SCHEMA_VERSION,)]
        raw.close()
        with pytest.raises(sqlite3.IntegrityError):  # foreign keys are enforced
            with s.db.tx() as db:
                db.execute("INSERT INTO events VALUES ('nope', 0, 0, '{}')")
    finally:
        s.close()


def test_a_file_that_is_not_a_database_is_a_storage_error(tmp_path):
    (tmp_path / "junk.db").write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StorageError, match="cannot open"):
        SqliteStore(tmp_path / "junk.db")


def test_open_store_understands_paths_and_urls(tmp_path):
    for location in [tmp_path / "p.db", f"sqlite:///{tmp_path}/u.db", ":memory:",
                     "sqlite://:memory:"]:
        s = open_store(location)
        assert isinstance(s, SqliteStore)
        s.close()
    assert (tmp_path / "u.db").exists()
    with pytest.raises(StorageError, match="unsupported store URL scheme 'mysql'"):
        open_store("mysql://db/arena")


def test_open_store_opens_postgresql_urls(pg_url):
    s = open_store(pg_url)
    try:
        assert isinstance(s, PostgresStore) and s.schema_version() == SCHEMA_VERSION
    finally:
        s.close()


def test_an_unreachable_postgresql_is_a_storage_error_naming_it(tmp_path):
    url = f"postgresql:///arena?host={tmp_path}&port=1&user=arena&connect_timeout=2"
    with pytest.raises(StorageError, match=r"cannot reach the database postgresql://.*:1/arena"):
        open_store(url)


def test_the_bot_filter_uses_the_index(tmp_path):
    s = SqliteStore(tmp_path / "a.db")
    plan = s._write.execute(
        "EXPLAIN QUERY PLAN SELECT match_id FROM match_players WHERE bot = ?", ("x",)).fetchall()
    s.close()
    assert any("match_players_bot" in row[3] for row in plan)


def test_the_read_pool_stays_bounded_while_readers_and_a_writer_run(tmp_path):
    s = SqliteStore(tmp_path / "a.db", read_pool_size=2)
    read_while_writing(s, readers=4)
    assert 1 <= len(s.db.all_readers) <= 2  # the read pool is bounded
    s.close()
    assert s.db.all_readers == []




class _LockedAtClose:
    """A write connection whose closing statistics find the file locked."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def execute(self, sql: str, *args):
        if sql.startswith("PRAGMA optimize"):
            raise sqlite3.OperationalError("database is locked")
        return self.conn.execute(sql, *args)

    def close(self) -> None:
        self.conn.close()


def test_closing_while_another_process_writes_keeps_what_was_committed(tmp_path):
    path = tmp_path / "a.db"
    store = SqliteStore(path)
    store.add_bot("alpha", "token-alpha")
    store.db.write_connection = _LockedAtClose(store.db.write_connection)
    store.close()  # no error: the statistics are an optimisation
    again = SqliteStore(path)
    assert [b.name for b in again.list_bots()] == ["alpha"]
    again.close()


def test_close_waits_for_a_read_running_on_another_thread(tmp_path):
    # A service's poll runs its read on a thread; the task that awaited it
    # may be cancelled and the store closed meanwhile. Closing a connection
    # under a running query crashed the process (sqlite3 segfaults).
    import threading

    from arena.storage.base import StorageError

    store = SqliteStore(tmp_path / "arena.db")
    inside, leave, closed = threading.Event(), threading.Event(), threading.Event()

    def read() -> None:
        with store.db.read() as conn:
            inside.set()
            leave.wait(30)
            conn.execute("SELECT count(*) FROM matches").fetchone()

    reader = threading.Thread(target=read)
    reader.start()
    assert inside.wait(30)
    closer = threading.Thread(target=lambda: (store.close(), closed.set()))
    closer.start()
    assert not closed.wait(0.2)  # the read still holds its connection
    leave.set()
    reader.join(30)
    assert closed.wait(30)
    closer.join(30)
    with pytest.raises(StorageError, match="closed"):
        store.list_matches()
