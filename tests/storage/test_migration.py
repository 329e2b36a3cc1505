"""A database written by the first schema opens, reads and appends."""

from __future__ import annotations

import json
import sqlite3
import time

from arena.storage.base import MatchStatus, SeatFaults, StoredEvent
from arena.storage.sqlite import MIGRATIONS, SCHEMA_VERSION, SqliteStore


def test_a_version_1_database_is_migrated_and_its_events_kept(tmp_path):
    path = tmp_path / "old.db"
    db = sqlite3.connect(path)
    for statement in MIGRATIONS[0]:
        db.execute(statement)
    db.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
    db.execute("INSERT INTO schema_version VALUES (1)")
    columns = [row[1] for row in db.execute("PRAGMA table_info(matches)")]
    values = {"id": "m1", "game": "muushig", "players": json.dumps(list("abcde")),
              "rules": "{}", "limits": "{}", "status": "running", "started_at": time.time()}
    present = [c for c in columns if c in values]
    db.execute(f"INSERT INTO matches ({', '.join(present)}) VALUES "
               f"({', '.join('?' for _ in present)})", [values[c] for c in present])
    db.executemany("INSERT INTO events (match_id, seq, at, data) VALUES (?, ?, ?, ?)",
                   [("m1", i, 1.0, json.dumps({"kind": "play", "seat": i, "card": "AS"}))
                    for i in range(3)])
    db.commit()
    db.close()

    store = SqliteStore(path)
    assert store.schema_version() == SCHEMA_VERSION > 1
    assert [e.seq for e in store.get_events("m1")] == [0, 1, 2]
    store.append_events("m1", [StoredEvent(seq=3, at=2.0, data={"kind": "trick", "winner": 0})])
    assert [e.data["kind"] for e in store.get_events("m1")] == ["play"] * 3 + ["trick"]
    assert [e.seq for e in store.get_events("m1", after_seq=1)] == [2, 3]
    store.finish_match("m1", result={"stars": [1, 1, 1, 1, 1]}, reveal=[],
                       faults=[SeatFaults()] * 5, latency_ms=[[]] * 5, finished_at=3.0)
    assert store.get_match("m1").status is MatchStatus.FINISHED
    store.close()
