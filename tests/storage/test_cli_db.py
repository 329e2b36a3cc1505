"""Every command opens its store through open_store, so ``--db`` takes a
PostgreSQL URL wherever it takes a SQLite file."""

from __future__ import annotations

from arena.cli import main
from arena.storage import open_store
from arena.storage.base import MatchStatus


def test_a_match_and_a_bot_stored_the_same_on_both_backends(db_location, capsys):
    assert main(["--log-level", "warning", "match", "--db", db_location, "--seed", "7"]) == 0
    table = capsys.readouterr().out
    assert main(["--log-level", "warning", "bots", "add", "ann", "--db", db_location]) == 0
    token = capsys.readouterr().out.strip()
    store = open_store(db_location)
    try:
        (record,) = store.list_matches()
        assert record.status is MatchStatus.FINISHED and record.seed == "7"
        assert f"match {record.id}" in table
        assert len(store.get_events(record.id)) > 1000  # the whole log
        assert [b.name for b in store.list_bots()] == ["ann"] and token
    finally:
        store.close()


def test_same_seed_same_result_on_sqlite_and_postgresql(tmp_path, pg_url, capsys):
    results = []
    for location in (str(tmp_path / "a.db"), pg_url):
        assert main(["--log-level", "warning", "match", "--db", location, "--seed", "11"]) == 0
        capsys.readouterr()
        store = open_store(location)
        try:
            results.append(store.list_matches()[0].result)
        finally:
            store.close()
    assert results[0] == results[1]
