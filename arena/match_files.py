"""Match files back into a store: what ``arena view`` serves.

A file is either notation (docs/notation.md), which is replayed and checked
first, or JSON Lines of dataset records (docs/dataset.md). Either becomes
the match records the web reads, in a store of its own (``arena view``
uses an in-memory one): the same replay page, the same deck check in the
browser.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

from arena.notation import FORMAT_LINE, NotationError, parse_notation, replay_notation
from arena.notation.document import label_of
from arena.storage.base import MatchRecord, MatchStatus, SeatFaults, Store, StoredEvent

SCHEMA = "arena-match/1"  # the dataset record (arena.dataset.SCHEMA)


def _time(text: str) -> float:
    try:
        return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(
            tzinfo=timezone.utc).timestamp()
    except ValueError:
        return 0.0


def record_from_notation(text: str) -> dict[str, Any]:
    """The dataset record of a notation file, after it replays as valid."""
    try:
        replayed = replay_notation(parse_notation(text))
    except NotationError as exc:
        raise ValueError(str(exc)) from None
    doc = replayed.notation
    at = _time(doc.date)
    events: list[dict[str, Any]] = []
    reveal: list[dict[str, Any]] = []
    for data in replayed.events:
        events.append(data)
        if data.get("kind") == "deal":  # the server's commit follows its deal
            deal = doc.deal(label_of(data))
            assert deal is not None and deal.salt is not None  # the replay checked both
            events.append({"kind": "commit", **deal.label, "commitment": deal.commitment})
            reveal.append({**deal.label, "salt": deal.salt, "deck": list(data["deck"])})
    return {"schema": SCHEMA, "id": doc.match_id, "game": doc.game, "tournament_id": None,
            "players": doc.players, "rules": doc.rules, "limits": {}, "started_at": at,
            "finished_at": at, "result": doc.result, "faults": None, "reveal": reveal,
            "events": [{"seq": i, "at": at, "data": d} for i, d in enumerate(events)]}


def load_match_file(text: str) -> list[dict[str, Any]]:
    """The dataset records a match file holds (one for a notation file)."""
    if text.lstrip().startswith(FORMAT_LINE):
        return [record_from_notation(text)]
    records = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise ValueError(f"line {number}: not notation, nor a JSON record: {exc}") from None
        if not isinstance(record, dict) or record.get("schema") != SCHEMA:
            raise ValueError(f"line {number}: not a {SCHEMA} record")
        records.append(record)
    if not records:
        raise ValueError("no match in this file")
    return records


def store_records(store: Store, records: list[dict[str, Any]]) -> list[str]:
    """Put dataset records into ``store`` as finished matches; their ids."""
    ids = []
    for r in records:
        players = list(r["players"])
        store.create_match(MatchRecord(
            id=r["id"], game=r["game"], players=players, rules=r.get("rules") or {},
            limits=r.get("limits") or {}, status=MatchStatus.RUNNING,
            started_at=float(r.get("started_at") or 0.0), tournament_id=None))
        store.append_events(r["id"], [StoredEvent(int(e["seq"]), float(e.get("at") or 0.0),
                                                  e["data"]) for e in r["events"]])
        faults = [SeatFaults(**f) for f in r["faults"]] if r.get("faults") else \
            [SeatFaults() for _ in players]
        store.finish_match(r["id"], result=r["result"], reveal=r["reveal"], faults=faults,
                           latency_ms=[[] for _ in players],
                           finished_at=float(r.get("finished_at") or 0.0))
        ids.append(r["id"])
    return ids
