"""Public matches as data: one JSON record per match, and its notation.

What may be published is decided by the web's read rules
(:meth:`arena.web.queries.Queries.match_detail`): a running match, a
finished one whose decks a duplicate rotation still has to play
("embargoed") and an aborted one are never written here. Everything below
reads a match through that one method.

The record (``SCHEMA``, docs/dataset.md)::

    {"schema": "arena-match/1", "id", "game", "tournament_id", "players",
     "rules", "limits", "started_at", "finished_at", "result", "faults",
     "reveal", "events": [{"seq", "at", "data"}, ...]}

Exports stream: the store is read a page of matches at a time and each
record is written before the next match is read, so memory stays bounded
whatever the size of the store.
"""

from __future__ import annotations

import gzip
import json

import msgspec
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from arena.notation import write_notation
from arena.storage.base import MatchStatus, Store

SCHEMA = "arena-match/1"
PAGE = 500  # matches read from the store at a time
# gzip's default level 9 took 33 ms a Muushig match; level 4 is some 5x
# faster for a file a few per cent bigger.
GZIP_LEVEL = 4
_encode = msgspec.json.Encoder().encode
_RECORD_KEYS = ("id", "game", "tournament_id", "players", "rules", "limits", "started_at",
                "finished_at", "result", "faults", "reveal")


class NotPublicError(LookupError):
    """The match exists but may not be published (yet): the message says why."""


def public_detail(detail: Mapping[str, Any]) -> Mapping[str, Any]:
    """``detail`` (a :meth:`Queries.match_detail` answer) if the match may be
    published in full, else :class:`NotPublicError`."""
    m = detail["match"]
    if detail.get("live") or m.get("status") == MatchStatus.RUNNING.value:
        raise NotPublicError(f"match {m['id']} is being played: its full record is published "
                             "once it is over")
    if detail.get("embargoed"):
        raise NotPublicError(f"match {m['id']} shares its decks with a rotation of its "
                             "tournament not played yet: it is published once that is played")
    if m.get("status") != MatchStatus.FINISHED.value or m.get("reveal") is None:
        raise NotPublicError(f"match {m['id']} is {m.get('status')}: only finished matches "
                             "are published")
    return detail


def match_record(detail: Mapping[str, Any]) -> dict[str, Any]:
    """The dataset record of a public match's detail."""
    m = public_detail(detail)["match"]
    return {"schema": SCHEMA, **{k: m.get(k) for k in _RECORD_KEYS},
            "events": list(detail["events"])}


def notation_of(detail: Mapping[str, Any], *, deal_key: str | None = None,
                deal_table: str | None = None) -> str:
    """The notation of a public match's detail."""
    m = public_detail(detail)["match"]
    return write_notation(m, (e["data"] for e in detail["events"]),
                          deal_key=deal_key, deal_table=deal_table)


@dataclass
class Selection:
    """Which public finished matches a dataset holds."""

    game: str | None = None
    tournament_id: str | None = None
    after: float | None = None  # finished at or after (epoch seconds)
    before: float | None = None  # finished before

    def wants(self, m: Any) -> bool:
        done = m.finished_at or 0.0
        return ((self.game is None or m.game == self.game)
                and (self.after is None or done >= self.after)
                and (self.before is None or done < self.before))


def scan(store: Store, selection: Selection, *, start: int = 0,
         page: int = PAGE) -> Iterator[tuple[int, Any]]:
    """(position, record without reveal) of the finished matches selected,
    newest started first, from position ``start`` of the store's finished
    list; a page of records in memory at a time."""
    at = start
    seen: set[str] = set()  # the previous page: a match finishing meanwhile shifts pages by one
    while True:
        rows = store.list_matches(tournament_id=selection.tournament_id,
                                  status=MatchStatus.FINISHED, limit=page, offset=at)
        ids = set()
        for i, m in enumerate(rows):
            ids.add(m.id)
            if m.id not in seen and selection.wants(m):
                yield at + i, m
        if len(rows) < page:
            return
        seen = ids
        at += page


@dataclass
class ExportReport:
    directory: Path
    files: dict[str, int] = field(default_factory=dict)  # file name -> matches
    withheld: int = 0  # finished but not public (embargoed)

    @property
    def matches(self) -> int:
        return sum(self.files.values())


def export_dataset(store: Store, detail_of: Callable[[str], Mapping[str, Any]],
                   directory: Path, selection: Selection | None = None) -> ExportReport:
    """Write every selected public match as ``DIR/<game>.jsonl.gz`` (one
    record a line) and ``DIR/schema.json``. ``detail_of(id)``: the web's
    read of a match (``Queries.match_detail``), which applies the rules of
    what may be shown."""
    directory.mkdir(parents=True, exist_ok=True)
    report = ExportReport(directory)
    outputs: dict[str, Any] = {}
    try:
        for _, m in scan(store, selection or Selection()):
            try:
                record = match_record(detail_of(m.id))
            except NotPublicError:
                report.withheld += 1
                continue
            name = f"{record['game']}.jsonl.gz"
            out = outputs.get(name)
            if out is None:
                out = outputs[name] = gzip.open(directory / name, "wb", compresslevel=GZIP_LEVEL)
                report.files[name] = 0
            out.write(_encode(record) + b"\n")
            report.files[name] += 1
    finally:
        for out in outputs.values():
            out.close()
    (directory / "schema.json").write_text(json.dumps(
        {"schema": SCHEMA, "files": report.files, "order": "newest started first",
         "documentation": "docs/dataset.md"}, indent=2) + "\n", encoding="utf-8")
    return report
