"""``arena db copy`` moves an arena between stores with nothing lost, and
``arena db migrate`` brings a schema up to date."""

from __future__ import annotations

import sqlite3

import pytest

from arena.cli import main
from arena.storage import open_store
from arena.storage.base import (
    MatchStatus,
    ScheduledMatch,
    SeatFaults,
    StoredEvent,
    TournamentRecord,
    TournamentStatus,
)
from arena.storage.schema import SCHEMA_VERSION
from arena.storage.sqlite import MIGRATIONS
from arena.storage import transfer
from arena.tournament.standings import compute_standings

from .helpers import events, finish_kwargs, match, result


def _arena(store) -> None:
    """Bots, a tournament with a schedule, finished / aborted / running matches,
    event logs, and rows of the first schema's events table."""
    store.add_bot("ann", "h-ann", owner="Ann")
    store.ensure_bot("house-1", kind="house")
    store.add_bot("gone", "h-gone")
    store.remove_bot("gone")
    _hosted_version(store)
    store.create_tournament(
        TournamentRecord(id="t1", name="Cup", game="muushig", config={"seed": 1},
                         status=TournamentStatus.RUNNING, created_at=5.0),
        [ScheduledMatch(tournament_id="t1", slot=i, players=["ann", "bob", "cid", "dan", "eve"],
                        seed=f"1:{i}", extra={"table": i}) for i in range(6)])
    for i in range(12):
        players = ["ann", "bob", "cid", "dan", "eve"][i % 5:] + ["ann", "bob", "cid", "dan",
                                                                 "eve"][:i % 5]
        tid = "t1" if i < 6 else None
        store.create_match(match(f"m{i}", started_at=1000.0 + i // 2, players=players,
                                 tournament_id=tid))
        store.append_events(f"m{i}", events(0, 7))
        store.append_events(f"m{i}", events(7, 3))
        if i % 4 == 3:
            store.abort_match(f"m{i}", "table closed", faults=[SeatFaults(disconnects=1)] * 5)
        elif i != 10:
            ranks = [(i + s) % 5 + 1 for s in range(5)]
            store.finish_match(f"m{i}", **finish_kwargs(2000.0 + i) | {
                "result": result([5 - r for r in ranks], [10 * r for r in ranks], ranks)},
                slot=("t1", i) if tid else None)
    store.note_attempt("t1", 0)


def _legacy_events(store) -> None:
    """A match logged in the first schema's ``events`` table, one row per event."""
    store.create_match(match("old", started_at=900.0))
    with store.db.tx() as db:
        db.executemany("INSERT INTO events (match_id, seq, at, data) VALUES (?, ?, ?, ?)",
                       [("old", i, 3.5, '{"kind":"play"}') for i in range(3)])


def _standings(store, tournament_id=None):
    return [row.to_dict() for row in compute_standings(
        store.finished_matches(tournament_id=tournament_id))]


def _snapshot(store) -> dict:
    return {
        "bots": store.list_bots(),
        "tournaments": store.list_tournaments(),
        "schedule": store.get_schedule("t1"),
        "matches": store.list_matches(limit=100),
        "full": [store.get_match(f"m{i}") for i in range(12)],
        "events": {f"m{i}": store.get_events(f"m{i}") for i in range(12)},
        "counts": {s: store.count_matches(status=s) for s in MatchStatus},
        "standings": _standings(store),
        "cup": _standings(store, "t1"),
    }


def test_a_sqlite_arena_copied_to_postgresql_loses_nothing(tmp_path, pg_url, capsys):
    src = tmp_path / "arena.db"
    store = open_store(src)
    _arena(store)
    _legacy_events(store)
    store.close()

    assert main(["db", "copy", str(src), pg_url]) == 0
    assert "every table checked" in capsys.readouterr().out

    before, after = open_store(src), open_store(pg_url)
    try:
        a, b = _snapshot(before), _snapshot(after)
        assert a["counts"] == b["counts"] == {MatchStatus.RUNNING: 2, MatchStatus.FINISHED: 8,
                                              MatchStatus.ABORTED: 3}
        assert a["standings"] and a["standings"] == b["standings"]
        assert a["cup"] and a["cup"] == b["cup"]
        assert a == b
        assert [e.seq for e in after.get_events("old")] == [0, 1, 2]  # first-schema rows too
        # The copy is a working store: its logs continue, new rows get fresh keys.
        after.append_events("m10", [StoredEvent(seq=10, at=4.0, data={"kind": "x"})])
        after.create_match(match("m12", started_at=1005.0))  # ties m10, m11
        assert after.list_matches(limit=1)[0].id == "m12"  # inserted last, listed first on ties
    finally:
        before.close()
        after.close()


def test_copy_goes_both_ways(tmp_path, pg_url):
    store = open_store(pg_url)
    _arena(store)
    expected = _snapshot(store)
    store.close()
    assert main(["db", "copy", pg_url, str(tmp_path / "back.db")]) == 0
    back = open_store(tmp_path / "back.db")
    try:
        assert _snapshot(back) == expected
    finally:
        back.close()


def test_copy_refuses_a_store_that_is_not_empty(tmp_path, db_location, capsys):
    src = open_store(tmp_path / "src.db")
    _arena(src)
    src.close()
    dst = open_store(db_location)
    dst.add_bot("zed", None)
    dst.close()
    assert main(["db", "copy", str(tmp_path / "src.db"), db_location]) == 1
    assert "already holds an arena" in capsys.readouterr().err


def test_a_failed_copy_leaves_the_destination_empty(tmp_path, db_location, monkeypatch):
    src = open_store(tmp_path / "src.db")
    _arena(src)
    real_chunks = transfer._chunks

    def failing(db, sql):
        if "FROM event_blocks" in sql:
            raise OSError("disk full")
        return real_chunks(db, sql)

    monkeypatch.setattr(transfer, "_chunks", failing)
    dst = open_store(db_location)
    try:
        with pytest.raises(OSError):
            transfer.copy_store(src, dst)
        assert dst.list_bots() == [] and dst.count_matches() == 0
        assert dst.list_tournaments() == []
    finally:
        src.close()
        dst.close()


def test_a_copy_that_differs_is_reported(tmp_path, pg_url, monkeypatch):
    src = open_store(tmp_path / "src.db")
    _arena(src)
    dst = open_store(pg_url)
    real = transfer.table_digests
    calls = []

    def tampered(store):
        digests = real(store)
        calls.append(store)
        if len(calls) == 2:  # the destination's
            digests["matches"] = (digests["matches"][0] - 1, "0")
        return digests

    monkeypatch.setattr(transfer, "table_digests", tampered)
    try:
        with pytest.raises(transfer.CopyMismatchError, match=r"matches \(12 rows, 11 copied\)"):
            transfer.copy_store(src, dst)
    finally:
        src.close()
        dst.close()


def test_db_migrate_upgrades_an_old_sqlite_file_and_reports_it(tmp_path, capsys):
    path = tmp_path / "old.db"
    raw = sqlite3.connect(path)
    for statement in MIGRATIONS[0]:
        raw.execute(statement)
    raw.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    raw.execute("INSERT INTO schema_version VALUES (1)")
    raw.commit()
    raw.close()
    assert main(["db", "migrate", "--db", str(path)]) == 0
    assert f"schema version 1 -> {SCHEMA_VERSION}" in capsys.readouterr().out
    assert main(["db", "migrate", "--db", str(path)]) == 0
    assert "up to date" in capsys.readouterr().out


def test_db_migrate_creates_the_schema_on_postgresql(pg_url, capsys):
    assert main(["db", "migrate", "--db", pg_url]) == 0
    assert f"schema version 0 -> {SCHEMA_VERSION}" in capsys.readouterr().out
    store = open_store(pg_url)
    try:
        assert store.schema_version() == SCHEMA_VERSION
    finally:
        store.close()


UPLOAD = bytes(range(256)) * 4  # every byte value: a blob, not text


def _hosted_version(store) -> None:
    """A hosted version of ann: its record, its upload, its build log and a stderr."""
    stored = store.add_hosted_version(
        {"bot": "ann", "status": "ready", "lang": "python", "game": "muushig",
         "filename": "bot.py", "content_hash": "ab" * 32, "created_at": 7.5,
         "files": ["bot.py"], "run": ["python3", "-u", "bot.py"], "matches": ["m1"],
         "validation": {"passed": True, "match_id": "m1"}}, UPLOAD)
    store.keep_hosted_log("ann", stored["version"], "build.log", b"$ compileall\n")
    store.keep_hosted_log("ann", stored["version"], "stderr/m1", b"\xff\x00 said\n", keep=50)


def _has_hosted_version(store) -> None:
    record = store.hosted_version("ann", 1)
    assert record["status"] == "ready" and record["validation"] == {"passed": True,
                                                                     "match_id": "m1"}
    assert store.hosted_upload("ann", 1) == UPLOAD
    assert store.hosted_log("ann", 1, "stderr/m1") == b"\xff\x00 said\n"


def _with_files(store, folder) -> bytes:
    """A finished tournament's deal key, a build cache and a bot log."""
    from arena.storage.deal_keys import DealKeyring

    key = DealKeyring.for_store(store).create("t1")
    (folder / "hosted" / "ann" / "v1-abab").mkdir(parents=True)
    (folder / "hosted" / "ann" / "v1-abab" / "built").write_text("")
    (folder / "bot-logs" / "ann").mkdir(parents=True)
    (folder / "bot-logs" / "ann" / "m1.log").write_text("hello\n")
    return key


def test_copy_carries_deal_keys_to_a_database_server_and_names_what_stays(
        tmp_path, pg_url, capsys):
    from arena.storage.deal_keys import DealKeyring

    src = tmp_path / "arena.db"
    store = open_store(src)
    _arena(store)
    key = _with_files(store, tmp_path)
    ladder = bytes(range(32))
    DealKeyring.for_store(store).record_ladder_key("m-ladder", ladder)
    store.close()
    assert main(["db", "copy", str(src), pg_url]) == 0
    out = capsys.readouterr().out
    copied = open_store(pg_url)
    try:
        assert DealKeyring.for_store(copied).load("t1") == key  # t1 resumes on the copy
        # A ladder match stays verifiable on the database server.
        assert DealKeyring.for_store(copied).ladder_key("m-ladder") == ladder
        _has_hosted_version(copied)  # every node of the server sees the versions
    finally:
        copied.close()
    assert "deal keys\t2 kept" in out
    assert "ladder" not in out  # nothing of them left behind
    assert "hosted_versions\t1 rows" in out and "left behind: hosted" not in out
    assert f"left behind: bot logs: {tmp_path / 'bot-logs'}" in out


def test_copy_to_another_sqlite_folder_carries_keys_versions_and_logs(tmp_path, capsys):
    from arena.storage.deal_keys import DealKeyring

    (tmp_path / "old").mkdir()
    (tmp_path / "new").mkdir()
    store = open_store(tmp_path / "old" / "arena.db")
    _arena(store)
    key = _with_files(store, tmp_path / "old")
    store.close()
    assert main(["db", "copy", str(tmp_path / "old" / "arena.db"),
                 str(tmp_path / "new" / "arena.db")]) == 0
    out = capsys.readouterr().out
    assert "left behind" not in out
    copied = open_store(tmp_path / "new" / "arena.db")
    try:
        assert DealKeyring.for_store(copied).load("t1") == key
        _has_hosted_version(copied)
    finally:
        copied.close()
    assert not (tmp_path / "new" / "hosted").exists()  # a cache: the new node builds its own
    assert (tmp_path / "new" / "bot-logs" / "ann" / "m1.log").read_text() == "hello\n"
