"""The event log of a match, for both SQL backends.

A match's log is append-only and numbered 0, 1, 2... Each write batch
stores a match's new events as ONE row of ``event_blocks``: ``data`` is the
JSON array of the events, ``ats`` the JSON array of their times. A busy
server appends thousands of events per second over hundreds of matches; a
row per event cost a B-tree insert and a GIL round trip each and held the
event loop back, a row per batch costs little. Readers see events one by
one (:meth:`EventLog.get_events`); rows of the first schema's ``events``
table are still read.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from arena.storage.base import MatchStatus, NotFoundError, StorageError, StoredEvent
from arena.storage.blocks import PendingBlock, Row, dumps, pending_of
from arena.storage.connections import Database

__all__ = ["EventLog", "PendingBlock", "Row", "dumps", "status_of"]

MAX_KNOWN_LOGS = 10_000  # running matches whose next event seq is kept in memory

_INSERT_BLOCK = ("INSERT INTO event_blocks (match_id, first_seq, last_seq, ats, data)"
                 " VALUES (?, ?, ?, ?, ?)")


def status_of(db: Any, match_id: str) -> MatchStatus:
    row = db.execute("SELECT status FROM matches WHERE id = ?", (match_id,)).fetchone()
    if row is None:
        raise NotFoundError(f"no match {match_id!r}")
    return MatchStatus(row[0])


def rows_of(match_id: str, events: list[StoredEvent]) -> list[Row]:
    rows = []
    for e in events:
        try:
            rows.append((e.seq, e.at, dumps(e.data)))
        except (TypeError, ValueError) as exc:
            raise StorageError(f"match {match_id!r}: event seq {e.seq} is not plain "
                               f"JSON ({exc})") from None
    return rows


class EventLog:
    """The event methods of :class:`arena.storage.store.SqlStore`."""

    db: Database

    def __init__(self) -> None:
        # Next event seq of running matches this store appended to (under
        # db.lock): a match is played by one node, and every status change
        # of it goes through that node's store and forgets the match here.
        self._next_seq: dict[str, int] = {}

    def _next_seq_of(self, db: Any, match_id: str) -> int:
        """The seq the match's log continues with; refuses a match that is
        not running. Known matches are answered from memory (see
        ``_next_seq``), which saves two queries per match and batch."""
        expected = self._next_seq.get(match_id)
        if expected is not None:
            return expected
        status = status_of(db, match_id)
        if status is not MatchStatus.RUNNING:
            raise StorageError(f"match {match_id!r} is {status.value}; its log is closed")
        last = db.execute(
            "SELECT MAX(last) FROM (SELECT MAX(seq) AS last FROM events WHERE match_id = ?"
            " UNION ALL SELECT MAX(last_seq) FROM event_blocks WHERE match_id = ?) AS logs",
            (match_id, match_id)).fetchone()[0]
        return 0 if last is None else int(last) + 1

    def _append(self, db: Any, match_id: str, pending: PendingBlock) -> int:
        """Insert one match's block (in a transaction); returns the next seq."""
        pending.check(match_id, self._next_seq_of(db, match_id))
        db.execute(_INSERT_BLOCK, pending.row(match_id))
        return pending.next_seq

    def _remember(self, next_seq: dict[str, int]) -> None:
        """After a commit: where each appended match's log continues."""
        if len(self._next_seq) + len(next_seq) > MAX_KNOWN_LOGS:
            self._next_seq.clear()  # a bound; forgotten matches are looked up again
        self._next_seq.update(next_seq)

    def _forget(self, match_id: str | None = None) -> None:
        if match_id is None:
            self._next_seq.clear()
        else:
            self._next_seq.pop(match_id, None)

    def append_events(self, match_id: str, events: list[StoredEvent]) -> None:
        if not events:
            return
        with self.db.lock:
            with self.db.tx() as db:
                next_seq = self._append(db, match_id, pending_of(rows_of(match_id, events)))
            self._remember({match_id: next_seq})

    def append_events_many(self, batches: Mapping[str, list[StoredEvent]]
                           ) -> dict[str, Exception]:
        """Append several matches' events in ONE transaction (the writer's
        batching). A match whose batch is refused is skipped, the others are
        kept; returns the refusals by match id."""
        failed: dict[str, Exception] = {}
        rows: dict[str, list[Row]] = {}
        for match_id, events in batches.items():
            try:
                rows[match_id] = rows_of(match_id, events)
            except StorageError as exc:
                failed[match_id] = exc
        failed.update(self.append_rows_many(rows))
        return failed

    def append_rows_many(self, batches: Mapping[str, list[Row]]) -> dict[str, Exception]:
        """Like :meth:`append_events_many` for events already encoded:
        ``(seq, at, JSON text)`` rows; returns the refusals by match id."""
        return self.append_blocks({match_id: pending_of(rows)
                                   for match_id, rows in batches.items() if rows})

    def append_blocks(self, blocks: Mapping[str, PendingBlock]) -> dict[str, Exception]:
        """Append one block per match, as the store writer collects them,
        in ONE transaction: every block is checked first, then all accepted
        ones go in with one statement; a refused match is skipped, the
        others are kept. Returns the refusals by match id."""
        failed: dict[str, Exception] = {}
        with self.db.lock:
            try:
                with self.db.tx() as db:
                    accepted: list[tuple[str, int, int, str, str]] = []
                    next_seq: dict[str, int] = {}
                    for match_id, pending in blocks.items():
                        if not pending.texts:
                            continue
                        try:
                            pending.check(match_id, self._next_seq_of(db, match_id))
                            accepted.append(pending.row(match_id))
                        except StorageError as exc:
                            failed[match_id] = exc
                            continue
                        next_seq[match_id] = pending.next_seq
                    if accepted:
                        db.executemany(_INSERT_BLOCK, accepted)
            except self.db.integrity_error:
                # Only if the log changed behind this store's back (the
                # remembered seqs are stale): forget them and go match by match.
                self._next_seq.clear()
                return self._append_one_by_one(blocks)
            self._remember(next_seq)
        return failed

    def _append_one_by_one(self, blocks: Mapping[str, PendingBlock]) -> dict[str, Exception]:
        failed: dict[str, Exception] = {}
        with self.db.tx() as db:
            for match_id, pending in blocks.items():
                if not pending.texts:
                    continue
                db.execute("SAVEPOINT batch")
                try:
                    self._append(db, match_id, pending)
                except (StorageError, self.db.integrity_error) as exc:
                    db.execute("ROLLBACK TO SAVEPOINT batch")
                    failed[match_id] = (exc if isinstance(exc, StorageError) else StorageError(
                        f"match {match_id!r}: {exc}; events are append-only"))
                db.execute("RELEASE SAVEPOINT batch")
        return failed

    def get_events(self, match_id: str, after_seq: int = -1) -> list[StoredEvent]:
        with self.db.read() as db:
            rows = db.execute("SELECT seq, at, data FROM events WHERE match_id = ? AND seq > ?"
                              " ORDER BY seq", (match_id, after_seq)).fetchall()
            blocks = db.execute("SELECT first_seq, ats, data FROM event_blocks"
                                " WHERE match_id = ? AND last_seq > ? ORDER BY first_seq",
                                (match_id, after_seq)).fetchall()
            if not rows and not blocks:
                status_of(db, match_id)  # NotFoundError for an unknown match
        events = [StoredEvent(seq=r[0], at=r[1], data=json.loads(r[2])) for r in rows]
        for first, ats, data in blocks:
            events.extend(StoredEvent(seq=first + i, at=at, data=event)
                          for i, (at, event) in enumerate(zip(json.loads(ats), json.loads(data)))
                          if first + i > after_seq)
        return events
