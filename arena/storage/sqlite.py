"""SQLite implementation of :class:`arena.storage.base.Store` (the embedded default).

Connections and threads
    One *write* connection, guarded by a lock, serves every method that
    changes data; the server calls those from the single writer thread
    (:mod:`arena.storage.writer`). Reads use a small bounded pool of separate
    read-only connections, so the web can read from its own thread (or from
    executor threads) while a write transaction is open: in WAL mode readers
    never wait for the writer. A ``:memory:`` database cannot be shared
    between connections, so there every call goes through the write
    connection under the lock.

Durability
    The journal is WAL. Ordinary commits (event batches, bots) run with
    ``synchronous=NORMAL``: a commit survives the process being killed
    (SIGKILL) because the WAL lives in the OS page cache, and only a power
    cut can lose the last few event batches. Commits that make something
    count -- finishing or aborting a match, creating a tournament, completing
    a schedule slot -- switch to ``synchronous=FULL`` for that transaction, so
    the WAL (with every earlier event batch) is fsynced before they return.
    That costs one fsync per match, not one per event.

Events
    A match's log is append-only and numbered 0, 1, 2... Each write batch
    stores a match's new events as ONE row of ``event_blocks``: ``data`` is
    the JSON array of the events, ``ats`` the JSON array of their times. A
    busy server appends thousands of events per second over hundreds of
    matches; a row per event cost a B-tree insert and a GIL round trip each
    and held the event loop back, a row per batch costs little. Readers see
    events one by one as before (:meth:`SqliteStore.get_events`).

Schema
    Versioned by the ``schema_version`` table; :data:`MIGRATIONS` are applied
    in order on open. Rules, limits, results, reveals, faults and latencies
    are JSON text. Players are kept twice: as JSON on the match (to read a
    match in one row) and in ``match_players`` (to index "matches of bot X").
"""

from __future__ import annotations

import contextlib
import json
import queue
import sqlite3
import threading
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any, Iterator, Mapping

import structlog

from arena.storage.base import (
    AlreadyExistsError,
    BotRecord,
    MatchRecord,
    MatchStatus,
    NotFoundError,
    ScheduledMatch,
    SeatFaults,
    SlotTakenError,
    StorageError,
    Store,
    StoredEvent,
    TournamentRecord,
    TournamentStatus,
    Wire,
)

log = structlog.get_logger(__name__)

# Each migration is a list of statements, applied in one transaction.
MIGRATIONS: list[list[str]] = [
    [
        """CREATE TABLE bots (
            name TEXT PRIMARY KEY,
            token_hash TEXT UNIQUE,
            owner TEXT,
            kind TEXT NOT NULL,
            created_at REAL NOT NULL,
            removed INTEGER NOT NULL DEFAULT 0)""",
        """CREATE TABLE tournaments (
            id TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            game TEXT NOT NULL,
            config TEXT NOT NULL,
            status TEXT NOT NULL,
            created_at REAL NOT NULL,
            finished_at REAL)""",
        # tournament_id is deliberately not a foreign key: a match may be
        # played for a tournament kept by another node's store.
        """CREATE TABLE matches (
            id TEXT PRIMARY KEY,
            game TEXT NOT NULL,
            players TEXT NOT NULL,
            rules TEXT NOT NULL,
            limits TEXT NOT NULL,
            status TEXT NOT NULL,
            started_at REAL NOT NULL,
            finished_at REAL,
            tournament_id TEXT,
            result TEXT,
            reveal TEXT,
            faults TEXT,
            latency_ms TEXT,
            abort_reason TEXT,
            seed TEXT)""",
        "CREATE INDEX matches_newest ON matches (started_at DESC)",
        "CREATE INDEX matches_status ON matches (status, started_at DESC)",
        "CREATE INDEX matches_tournament ON matches (tournament_id, started_at DESC)",
        """CREATE TABLE match_players (
            match_id TEXT NOT NULL REFERENCES matches (id) ON DELETE CASCADE,
            seat INTEGER NOT NULL,
            bot TEXT NOT NULL,
            started_at REAL NOT NULL,
            PRIMARY KEY (match_id, seat))""",
        "CREATE INDEX match_players_bot ON match_players (bot, started_at DESC)",
        """CREATE TABLE events (
            match_id TEXT NOT NULL REFERENCES matches (id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            at REAL NOT NULL,
            data TEXT NOT NULL,
            PRIMARY KEY (match_id, seq)) WITHOUT ROWID""",
        """CREATE TABLE schedule (
            tournament_id TEXT NOT NULL REFERENCES tournaments (id) ON DELETE CASCADE,
            slot INTEGER NOT NULL,
            players TEXT NOT NULL,
            seed TEXT NOT NULL,
            match_id TEXT REFERENCES matches (id),
            attempts INTEGER NOT NULL DEFAULT 0,
            extra TEXT NOT NULL,
            PRIMARY KEY (tournament_id, slot))""",
    ],
    # 2: events are written in blocks, one row per match and write batch
    # (see "Events" above). Rows already in ``events`` stay there and are
    # still read; nothing new is written to that table.
    [
        # A rowid table: new blocks go to the end of the table's B-tree
        # (rows of a few KiB fit a WITHOUT ROWID table badly).
        """CREATE TABLE event_blocks (
            id INTEGER PRIMARY KEY,
            match_id TEXT NOT NULL REFERENCES matches (id) ON DELETE CASCADE,
            first_seq INTEGER NOT NULL,
            last_seq INTEGER NOT NULL,
            ats TEXT NOT NULL,
            data TEXT NOT NULL)""",
        "CREATE UNIQUE INDEX event_blocks_match ON event_blocks (match_id, first_seq)",
    ],
]
SCHEMA_VERSION = len(MIGRATIONS)

READ_POOL_SIZE = 4
MAX_KNOWN_LOGS = 10_000  # running matches whose next event seq is kept in memory
BUSY_TIMEOUT_MS = 5000


# One encoder for every value: json.dumps with options builds a new one per call.
_dumps = json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode


_INSERT_BLOCK = ("INSERT INTO event_blocks (match_id, first_seq, last_seq, ats, data)"
                 " VALUES (?, ?, ?, ?, ?)")


def _block(match_id: str, rows: list[tuple[int, float, str]]) -> tuple[str, int, int, str, str]:
    """One ``event_blocks`` row from consecutive ``(seq, at, JSON)`` rows:
    the events' JSON texts are joined into an array, not encoded again."""
    # Events of one decision share their time: each distinct one is encoded once.
    times: list[str] = []
    last: Any = None
    text = ""
    for row in rows:
        if row[1] != last or not text:
            last = row[1]
            try:
                if type(last) is bool or not isinstance(last, (int, float)):
                    raise TypeError(f"{last!r} is not a number")
                text = _dumps(last)
            except (TypeError, ValueError) as exc:
                raise StorageError(f"match {match_id!r}: event seq {row[0]} has no valid time "
                                   f"({exc})") from None
        times.append(text)
    return (match_id, rows[0][0], rows[-1][0], "[" + ",".join(times) + "]",
            "[" + ",".join([row[2] for row in rows]) + "]")


def _loads(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def _faults_from(value: Any) -> list[SeatFaults] | None:
    if value is None:
        return None
    return [SeatFaults(**f) for f in value]


class SqliteStore(Store):
    """A :class:`Store` in one SQLite file (or ``":memory:"`` for tests)."""

    def __init__(self, path: str | Path, *, read_pool_size: int = READ_POOL_SIZE) -> None:
        self.path = str(path)
        self._memory = self.path == ":memory:" or self.path.startswith("file::memory:")
        self._lock = threading.RLock()
        self._closed = False
        # Next event seq of running matches this store appended to (under
        # _lock): every status change goes through this store's write
        # connection and forgets the match, so the answer stays right.
        self._next_seq: dict[str, int] = {}
        if not self._memory:
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        try:
            self._write = self._connect()
            self._write.execute("PRAGMA journal_mode=WAL")
            self._write.execute("PRAGMA synchronous=NORMAL")
        except sqlite3.Error as exc:
            raise StorageError(f"cannot open the database {self.path}: {exc}") from exc
        self._migrate()
        self._read_slots = threading.BoundedSemaphore(max(1, read_pool_size))
        self._idle_readers: queue.LifoQueue[sqlite3.Connection] = queue.LifoQueue()
        self._all_readers: list[sqlite3.Connection] = []

    # -- connections ------------------------------------------------------
    def _connect(self, *, readonly: bool = False) -> sqlite3.Connection:
        if readonly:
            uri = Path(self.path).resolve().as_uri() + "?mode=ro"
            conn = sqlite3.connect(uri, uri=True, isolation_level=None,
                                   check_same_thread=False)
        else:
            conn = sqlite3.connect(self.path, isolation_level=None,
                                   check_same_thread=False)
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA foreign_keys=ON")
        return conn

    def _migrate(self) -> None:
        with self._tx() as db:
            db.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
            row = db.execute("SELECT version FROM schema_version").fetchone()
            version = 0 if row is None else row[0]
            if version > SCHEMA_VERSION:
                raise StorageError(
                    f"database {self.path} has schema version {version}, newer than this "
                    f"arena understands ({SCHEMA_VERSION}); upgrade the arena")
            for statements in MIGRATIONS[version:]:
                for statement in statements:
                    db.execute(statement)
            if row is None:
                db.execute("INSERT INTO schema_version VALUES (?)", (SCHEMA_VERSION,))
            elif version < SCHEMA_VERSION:
                db.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION,))
        if version < SCHEMA_VERSION:
            log.info("storage.migrated", path=self.path, old=version, new=SCHEMA_VERSION)

    def schema_version(self) -> int:
        with self._read() as db:
            return int(db.execute("SELECT version FROM schema_version").fetchone()[0])

    @contextlib.contextmanager
    def _tx(self, *, durable: bool = False) -> Iterator[sqlite3.Connection]:
        """One write transaction; ``durable`` fsyncs the WAL on commit."""
        with self._lock:
            if self._closed:
                raise StorageError("the store is closed")
            db = self._write
            if durable:
                db.execute("PRAGMA synchronous=FULL")
            try:
                db.execute("BEGIN IMMEDIATE")
                try:
                    yield db
                    db.execute("COMMIT")
                except BaseException:
                    if db.in_transaction:
                        db.execute("ROLLBACK")
                    raise
            except sqlite3.IntegrityError:
                raise  # callers turn these into AlreadyExistsError
            except sqlite3.Error as exc:
                raise StorageError(f"database {self.path}: {exc}") from exc
            finally:
                if durable:
                    db.execute("PRAGMA synchronous=NORMAL")

    @contextlib.contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        """A connection for reading inside one consistent snapshot."""
        if self._memory:
            with self._lock:
                if self._closed:
                    raise StorageError("the store is closed")
                yield self._write
            return
        if self._closed:
            raise StorageError("the store is closed")
        self._read_slots.acquire()
        try:
            try:
                conn = self._idle_readers.get_nowait()
            except queue.Empty:
                conn = self._connect(readonly=True)
                with self._lock:
                    self._all_readers.append(conn)
            try:
                conn.execute("BEGIN")
                try:
                    yield conn
                finally:
                    conn.execute("COMMIT")
            finally:
                self._idle_readers.put(conn)
        finally:
            self._read_slots.release()

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            for conn in self._all_readers:
                conn.close()
            self._all_readers.clear()
            try:
                self._write.execute("PRAGMA optimize")
            finally:
                self._write.close()

    # -- bots -------------------------------------------------------------
    @staticmethod
    def _bot(row: sqlite3.Row) -> BotRecord:
        return BotRecord(name=row["name"], token_hash=row["token_hash"],
                         created_at=row["created_at"], owner=row["owner"],
                         kind=row["kind"], removed=bool(row["removed"]))

    def add_bot(self, name: str, token_hash: str | None, *, owner: str | None = None,
                kind: str = "remote") -> BotRecord:
        record = BotRecord(name=name, token_hash=token_hash, created_at=time.time(),
                           owner=owner, kind=kind)
        try:
            with self._tx() as db:
                db.execute("INSERT INTO bots (name, token_hash, owner, kind, created_at)"
                           " VALUES (?, ?, ?, ?, ?)",
                           (name, token_hash, owner, kind, record.created_at))
        except sqlite3.IntegrityError as exc:
            what = "token" if "token_hash" in str(exc) else "name"
            raise AlreadyExistsError(f"a bot with that {what} exists already: {name!r}") from None
        return record

    def ensure_bot(self, name: str, *, kind: str = "remote") -> BotRecord:
        with self._tx() as db:
            db.execute("INSERT OR IGNORE INTO bots (name, token_hash, kind, created_at)"
                       " VALUES (?, NULL, ?, ?)", (name, kind, time.time()))
            row = db.execute("SELECT * FROM bots WHERE name = ?", (name,)).fetchone()
        return self._bot(row)

    def get_bot(self, name: str) -> BotRecord | None:
        with self._read() as db:
            row = db.execute("SELECT * FROM bots WHERE name = ?", (name,)).fetchone()
        return None if row is None else self._bot(row)

    def find_bot_by_token_hash(self, token_hash: str) -> BotRecord | None:
        """The bot owning that token; removed bots are never found."""
        with self._read() as db:
            row = db.execute("SELECT * FROM bots WHERE token_hash = ? AND removed = 0",
                             (token_hash,)).fetchone()
        return None if row is None else self._bot(row)

    def set_token_hash(self, name: str, token_hash: str) -> None:
        try:
            with self._tx() as db:
                cur = db.execute("UPDATE bots SET token_hash = ? WHERE name = ?",
                                 (token_hash, name))
                if cur.rowcount == 0:
                    raise NotFoundError(f"no bot named {name!r}")
        except sqlite3.IntegrityError:
            raise AlreadyExistsError("another bot has that token already") from None

    def remove_bot(self, name: str) -> None:
        with self._tx() as db:
            cur = db.execute("UPDATE bots SET removed = 1 WHERE name = ?", (name,))
            if cur.rowcount == 0:
                raise NotFoundError(f"no bot named {name!r}")

    def list_bots(self) -> list[BotRecord]:
        with self._read() as db:
            return [self._bot(r) for r in db.execute("SELECT * FROM bots ORDER BY name")]

    # -- matches ----------------------------------------------------------
    @staticmethod
    def _match(row: sqlite3.Row, *, full: bool = True) -> MatchRecord:
        return MatchRecord(
            id=row["id"], game=row["game"], players=_loads(row["players"]),
            rules=_loads(row["rules"]), limits=_loads(row["limits"]),
            status=MatchStatus(row["status"]), started_at=row["started_at"],
            finished_at=row["finished_at"], tournament_id=row["tournament_id"],
            result=_loads(row["result"]),
            reveal=_loads(row["reveal"]) if full else None,
            faults=_faults_from(_loads(row["faults"])),
            latency_ms=_loads(row["latency_ms"]),
            abort_reason=row["abort_reason"], seed=row["seed"])

    @staticmethod
    def _status_of(db: sqlite3.Connection, match_id: str) -> MatchStatus:
        row = db.execute("SELECT status FROM matches WHERE id = ?", (match_id,)).fetchone()
        if row is None:
            raise NotFoundError(f"no match {match_id!r}")
        return MatchStatus(row[0])

    def create_match(self, record: MatchRecord) -> None:
        """Insert ``record`` as ``running`` (its status field is ignored)."""
        try:
            with self._tx() as db:
                db.execute(
                    "INSERT INTO matches (id, game, players, rules, limits, status, started_at,"
                    " tournament_id, seed) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (record.id, record.game, _dumps(list(record.players)), _dumps(record.rules),
                     _dumps(record.limits), MatchStatus.RUNNING.value, record.started_at,
                     record.tournament_id, record.seed))
                db.executemany(
                    "INSERT INTO match_players (match_id, seat, bot, started_at)"
                    " VALUES (?, ?, ?, ?)",
                    [(record.id, seat, bot, record.started_at)
                     for seat, bot in enumerate(record.players)])
        except sqlite3.IntegrityError:
            raise AlreadyExistsError(f"a match with id {record.id!r} exists already") from None

    def _next_seq_of(self, db: sqlite3.Connection, match_id: str) -> int:
        """The seq the match's log continues with; refuses a match that is
        not running. Known matches are answered from memory (see
        ``_next_seq``), which saves two queries per match and batch."""
        expected = self._next_seq.get(match_id)
        if expected is not None:
            return expected
        status = self._status_of(db, match_id)
        if status is not MatchStatus.RUNNING:
            raise StorageError(f"match {match_id!r} is {status.value}; its log is closed")
        last = db.execute(
            "SELECT MAX(last) FROM (SELECT MAX(seq) AS last FROM events WHERE match_id = ?1"
            " UNION ALL SELECT MAX(last_seq) FROM event_blocks WHERE match_id = ?1)",
            (match_id,)).fetchone()[0]
        return 0 if last is None else last + 1

    @staticmethod
    def _check_seqs(match_id: str, expected: int, seqs: Iterator[int]) -> None:
        for i, seq in enumerate(seqs):
            if seq != expected + i:
                raise StorageError(
                    f"match {match_id!r}: event seq {seq} does not continue the log "
                    f"(expected {expected + i}); events are append-only and numbered 0, 1, 2...")

    @staticmethod
    def _rows_of(match_id: str, events: list[StoredEvent]) -> list[tuple[int, float, str]]:
        rows = []
        for e in events:
            try:
                rows.append((e.seq, e.at, _dumps(e.data)))
            except (TypeError, ValueError) as exc:
                raise StorageError(f"match {match_id!r}: event seq {e.seq} is not plain "
                                   f"JSON ({exc})") from None
        return rows

    def _append(self, db: sqlite3.Connection, match_id: str,
                rows: list[tuple[int, float, str]]) -> int:
        """Insert one match's rows (in a transaction); returns the next seq."""
        expected = self._next_seq_of(db, match_id)
        self._check_seqs(match_id, expected, (row[0] for row in rows))
        db.execute(_INSERT_BLOCK, _block(match_id, rows))
        return expected + len(rows)

    def _remember(self, next_seq: dict[str, int]) -> None:
        """After a commit: where each appended match's log continues."""
        if len(self._next_seq) + len(next_seq) > MAX_KNOWN_LOGS:
            self._next_seq.clear()  # a bound; forgotten matches are looked up again
        self._next_seq.update(next_seq)

    def append_events(self, match_id: str, events: list[StoredEvent]) -> None:
        if not events:
            return
        with self._lock:
            with self._tx() as db:
                next_seq = self._append(db, match_id, self._rows_of(match_id, events))
            self._remember({match_id: next_seq})

    def append_events_many(self, batches: Mapping[str, list[StoredEvent]]) -> dict[str, Exception]:
        """Append several matches' events in ONE transaction (the writer's
        batching). A match whose batch is refused is skipped, the others are
        kept; returns the refusals by match id."""
        failed: dict[str, Exception] = {}
        rows: dict[str, list[tuple[int, float, str]]] = {}
        for match_id, events in batches.items():
            try:
                rows[match_id] = self._rows_of(match_id, events)
            except StorageError as exc:
                failed[match_id] = exc
        failed.update(self.append_rows_many(rows))
        return failed

    def append_rows_many(self, batches: Mapping[str, list[tuple[int, float, str]]]
                         ) -> dict[str, Exception]:
        """Like :meth:`append_events_many` for events already encoded:
        ``(seq, at, JSON text)`` rows (the store writer encodes them on the
        event loop). Every batch is checked first, then all accepted rows go
        in with one statement, a block row per match; returns the refusals
        by match id."""
        failed: dict[str, Exception] = {}
        with self._lock:
            try:
                with self._tx() as db:
                    accepted: list[tuple[str, int, int, str, str]] = []
                    next_seq: dict[str, int] = {}
                    for match_id, rows in batches.items():
                        if not rows:
                            continue
                        try:
                            expected = self._next_seq_of(db, match_id)
                            self._check_seqs(match_id, expected, (row[0] for row in rows))
                            accepted.append(_block(match_id, rows))
                        except StorageError as exc:
                            failed[match_id] = exc
                            continue
                        next_seq[match_id] = expected + len(rows)
                    db.executemany(_INSERT_BLOCK, accepted)
            except sqlite3.IntegrityError:
                # Only if the log changed behind this store's back (the
                # remembered seqs are stale): forget them and go match by match.
                self._next_seq.clear()
                return self._append_one_by_one(batches)
            self._remember(next_seq)
        return failed

    def _append_one_by_one(self, batches: Mapping[str, list[tuple[int, float, str]]]
                           ) -> dict[str, Exception]:
        failed: dict[str, Exception] = {}
        with self._tx() as db:
            for match_id, rows in batches.items():
                if not rows:
                    continue
                db.execute("SAVEPOINT batch")
                try:
                    self._append(db, match_id, rows)
                except (StorageError, sqlite3.IntegrityError) as exc:
                    db.execute("ROLLBACK TO batch")
                    failed[match_id] = (exc if isinstance(exc, StorageError) else StorageError(
                        f"match {match_id!r}: {exc}; events are append-only"))
                db.execute("RELEASE batch")
        return failed

    def finish_match(self, match_id: str, *, result: Wire, reveal: list[Wire],
                     faults: list[SeatFaults], latency_ms: list[list[float]],
                     finished_at: float, slot: tuple[str, int] | None = None) -> None:
        with self._tx(durable=True) as db:
            if slot is not None:
                self._take_slot(db, slot, match_id)
            self._next_seq.pop(match_id, None)
            status = self._status_of(db, match_id)
            if status is not MatchStatus.RUNNING:
                raise StorageError(
                    f"match {match_id!r} is {status.value}, not running; it cannot be finished")
            n_seats = len(_loads(db.execute("SELECT players FROM matches WHERE id = ?",
                                            (match_id,)).fetchone()[0]))
            if len(faults) != n_seats or len(latency_ms) != n_seats:
                raise StorageError(
                    f"match {match_id!r} has {n_seats} seats but got {len(faults)} fault "
                    f"records and {len(latency_ms)} latency lists")
            db.execute(
                "UPDATE matches SET status = ?, finished_at = ?, result = ?, reveal = ?,"
                " faults = ?, latency_ms = ? WHERE id = ?",
                (MatchStatus.FINISHED.value, finished_at, _dumps(result), _dumps(reveal),
                 _dumps([asdict(f) for f in faults]), _dumps(latency_ms), match_id))

    @staticmethod
    def _take_slot(db: sqlite3.Connection, slot: tuple[str, int], match_id: str) -> None:
        """Give the slot its match inside finish_match's transaction."""
        tournament_id, index = slot
        row = db.execute("SELECT match_id FROM schedule WHERE tournament_id = ? AND slot = ?",
                         (tournament_id, index)).fetchone()
        if row is None:
            raise NotFoundError(f"tournament {tournament_id!r} has no slot {index}")
        if row[0] is not None and row[0] != match_id:
            raise SlotTakenError(f"slot {index} of tournament {tournament_id!r} already "
                                 f"counts match {row[0]!r}; match {match_id!r} is not finished")
        db.execute("UPDATE schedule SET match_id = ? WHERE tournament_id = ? AND slot = ?",
                   (match_id, tournament_id, index))

    def abort_match(self, match_id: str, reason: str, *,
                    faults: list[SeatFaults] | None = None) -> None:
        """Mark a running match aborted (``finished_at`` = when it stopped).

        Aborting an aborted match does nothing; a finished match stays
        finished (StorageError): a result, once counted, is never withdrawn.
        """
        with self._tx(durable=True) as db:
            self._next_seq.pop(match_id, None)
            status = self._status_of(db, match_id)
            if status is MatchStatus.ABORTED:
                return
            if status is MatchStatus.FINISHED:
                raise StorageError(f"match {match_id!r} is finished; it cannot be aborted")
            db.execute(
                "UPDATE matches SET status = ?, abort_reason = ?, finished_at = ?,"
                " faults = COALESCE(?, faults) WHERE id = ?",
                (MatchStatus.ABORTED.value, reason, time.time(),
                 None if faults is None else _dumps([asdict(f) for f in faults]), match_id))

    def abort_unfinished(self, reason: str = "server restarted") -> list[str]:
        with self._tx(durable=True) as db:
            self._next_seq.clear()
            ids = [r[0] for r in db.execute(
                "SELECT id FROM matches WHERE status = ? ORDER BY started_at",
                (MatchStatus.RUNNING.value,))]
            db.execute("UPDATE matches SET status = ?, abort_reason = ?, finished_at = ?"
                       " WHERE status = ?",
                       (MatchStatus.ABORTED.value, reason, time.time(),
                        MatchStatus.RUNNING.value))
        if ids:
            log.warning("storage.aborted_unfinished", count=len(ids), reason=reason)
        return ids

    def get_match(self, match_id: str) -> MatchRecord:
        with self._read() as db:
            row = db.execute("SELECT * FROM matches WHERE id = ?", (match_id,)).fetchone()
        if row is None:
            raise NotFoundError(f"no match {match_id!r}")
        return self._match(row)

    def get_events(self, match_id: str, after_seq: int = -1) -> list[StoredEvent]:
        with self._read() as db:
            rows = db.execute("SELECT seq, at, data FROM events WHERE match_id = ? AND seq > ?"
                              " ORDER BY seq", (match_id, after_seq)).fetchall()
            blocks = db.execute("SELECT first_seq, ats, data FROM event_blocks"
                                " WHERE match_id = ? AND last_seq > ? ORDER BY first_seq",
                                (match_id, after_seq)).fetchall()
            if not rows and not blocks:
                self._status_of(db, match_id)  # NotFoundError for an unknown match
        events = [StoredEvent(seq=r[0], at=r[1], data=json.loads(r[2])) for r in rows]
        for first, ats, data in blocks:
            events.extend(StoredEvent(seq=first + i, at=at, data=event)
                          for i, (at, event) in enumerate(zip(json.loads(ats), json.loads(data)))
                          if first + i > after_seq)
        return events

    @staticmethod
    def _where(bot: str | None, tournament_id: str | None,
               status: MatchStatus | str | None) -> tuple[str, list[Any]]:
        clauses: list[str] = []
        args: list[Any] = []
        if bot is not None:
            # A subquery, not a join: a bot seated twice in one match is listed once.
            clauses.append("m.id IN (SELECT match_id FROM match_players WHERE bot = ?)")
            args.append(bot)
        if tournament_id is not None:
            clauses.append("m.tournament_id = ?")
            args.append(tournament_id)
        if status is not None:
            clauses.append("m.status = ?")
            args.append(MatchStatus(status).value)
        where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
        return where, args

    def list_matches(self, *, bot: str | None = None, tournament_id: str | None = None,
                     status: MatchStatus | None = None, limit: int = 50,
                     offset: int = 0) -> list[MatchRecord]:
        """Newest first; ``reveal`` is omitted (``latency_ms`` is kept, so
        standings can be computed from these records)."""
        if limit < 0 or offset < 0:
            raise StorageError("limit and offset must be >= 0")
        where, args = self._where(bot, tournament_id, status)
        sql = (f"SELECT m.* FROM matches m {where}"
               " ORDER BY m.started_at DESC, m.rowid DESC LIMIT ? OFFSET ?")
        with self._read() as db:
            rows = db.execute(sql, [*args, limit, offset]).fetchall()
        return [self._match(r, full=False) for r in rows]

    def count_matches(self, *, bot: str | None = None, tournament_id: str | None = None,
                      status: MatchStatus | None = None) -> int:
        where, args = self._where(bot, tournament_id, status)
        with self._read() as db:
            return int(db.execute(f"SELECT COUNT(*) FROM matches m {where}",
                                  args).fetchone()[0])

    def finished_matches(self, *, tournament_id: str | None = None,
                         bot: str | None = None) -> list[MatchRecord]:
        """Every finished match (oldest first, without ``reveal``): the input
        of standings and rating charts."""
        where, args = self._where(bot, tournament_id, MatchStatus.FINISHED)
        with self._read() as db:
            rows = db.execute(f"SELECT m.* FROM matches m {where}"
                              " ORDER BY m.finished_at, m.rowid", args).fetchall()
        return [self._match(r, full=False) for r in rows]

    # -- tournaments --------------------------------------------------------
    @staticmethod
    def _tournament(row: sqlite3.Row) -> TournamentRecord:
        return TournamentRecord(id=row["id"], name=row["name"], game=row["game"],
                                config=_loads(row["config"]),
                                status=TournamentStatus(row["status"]),
                                created_at=row["created_at"], finished_at=row["finished_at"])

    def create_tournament(self, record: TournamentRecord,
                          schedule: list[ScheduledMatch]) -> None:
        for slot in schedule:
            if slot.tournament_id != record.id:
                raise StorageError(f"schedule slot {slot.slot} belongs to tournament "
                                   f"{slot.tournament_id!r}, not {record.id!r}")
        try:
            with self._tx(durable=True) as db:
                db.execute("INSERT INTO tournaments (id, name, game, config, status, created_at,"
                           " finished_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                           (record.id, record.name, record.game, _dumps(record.config),
                            TournamentStatus(record.status).value, record.created_at,
                            record.finished_at))
                db.executemany(
                    "INSERT INTO schedule (tournament_id, slot, players, seed, match_id,"
                    " attempts, extra) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [(record.id, s.slot, _dumps(list(s.players)), s.seed, s.match_id,
                      s.attempts, _dumps(s.extra)) for s in schedule])
        except sqlite3.IntegrityError as exc:
            raise AlreadyExistsError(
                f"tournament {record.id!r} or one of its slots exists already ({exc})") from None

    def get_tournament(self, tournament_id: str) -> TournamentRecord:
        with self._read() as db:
            row = db.execute("SELECT * FROM tournaments WHERE id = ?",
                             (tournament_id,)).fetchone()
        if row is None:
            raise NotFoundError(f"no tournament {tournament_id!r}")
        return self._tournament(row)

    def list_tournaments(self) -> list[TournamentRecord]:
        """Newest first."""
        with self._read() as db:
            rows = db.execute("SELECT * FROM tournaments ORDER BY created_at DESC, rowid DESC")
            return [self._tournament(r) for r in rows]

    def set_tournament_status(self, tournament_id: str, status: TournamentStatus) -> None:
        status = TournamentStatus(status)
        ended = status in (TournamentStatus.FINISHED, TournamentStatus.CANCELLED)
        with self._tx(durable=True) as db:
            cur = db.execute("UPDATE tournaments SET status = ?, finished_at = ? WHERE id = ?",
                             (status.value, time.time() if ended else None, tournament_id))
            if cur.rowcount == 0:
                raise NotFoundError(f"no tournament {tournament_id!r}")

    def get_schedule(self, tournament_id: str) -> list[ScheduledMatch]:
        with self._read() as db:
            rows = db.execute("SELECT * FROM schedule WHERE tournament_id = ? ORDER BY slot",
                              (tournament_id,)).fetchall()
            if not rows and db.execute("SELECT 1 FROM tournaments WHERE id = ?",
                                       (tournament_id,)).fetchone() is None:
                raise NotFoundError(f"no tournament {tournament_id!r}")
        return [ScheduledMatch(tournament_id=r["tournament_id"], slot=r["slot"],
                               players=_loads(r["players"]), seed=r["seed"],
                               match_id=r["match_id"], attempts=r["attempts"],
                               extra=_loads(r["extra"])) for r in rows]

    def add_schedule(self, tournament_id: str, schedule: list[ScheduledMatch]) -> None:
        with self._tx(durable=True) as db:
            if db.execute("SELECT 1 FROM tournaments WHERE id = ?",
                          (tournament_id,)).fetchone() is None:
                raise NotFoundError(f"no tournament {tournament_id!r}")
            if db.execute("SELECT 1 FROM schedule WHERE tournament_id = ? LIMIT 1",
                          (tournament_id,)).fetchone() is not None:
                raise StorageError(f"tournament {tournament_id!r} has a schedule already")
            for slot in schedule:
                if slot.tournament_id != tournament_id:
                    raise StorageError(f"schedule slot {slot.slot} belongs to tournament "
                                       f"{slot.tournament_id!r}, not {tournament_id!r}")
            db.executemany(
                "INSERT INTO schedule (tournament_id, slot, players, seed, match_id,"
                " attempts, extra) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(tournament_id, s.slot, _dumps(list(s.players)), s.seed, s.match_id,
                  s.attempts, _dumps(s.extra)) for s in schedule])

    def complete_slot(self, tournament_id: str, slot: int, match_id: str) -> None:
        with self._tx(durable=True) as db:
            if self._status_of(db, match_id) is not MatchStatus.FINISHED:
                raise StorageError(f"match {match_id!r} is not finished; only a finished "
                                   f"match completes slot {slot}")
            cur = db.execute("UPDATE schedule SET match_id = ? WHERE tournament_id = ?"
                             " AND slot = ?", (match_id, tournament_id, slot))
            if cur.rowcount == 0:
                raise NotFoundError(f"tournament {tournament_id!r} has no slot {slot}")

    def note_attempt(self, tournament_id: str, slot: int) -> None:
        with self._tx() as db:
            cur = db.execute("UPDATE schedule SET attempts = attempts + 1"
                             " WHERE tournament_id = ? AND slot = ?", (tournament_id, slot))
            if cur.rowcount == 0:
                raise NotFoundError(f"tournament {tournament_id!r} has no slot {slot}")
