"""The store methods of both SQL backends: bots, matches, tournaments.

:class:`SqlStore` implements :class:`arena.storage.base.Store` once, on a
:class:`arena.storage.connections.Database` (SQLite or PostgreSQL) and the
schema of :mod:`arena.storage.schema`; the event log is
:class:`arena.storage.events.EventLog`. Rules, limits, results, reveals,
faults and latencies are JSON text. Players are kept twice: as JSON on the
match (to read a match in one row) and in ``match_players`` (to index
"matches of bot X").
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict
from collections.abc import Iterable
from typing import Any

import structlog

from arena.storage.base import (
    AlreadyExistsError,
    BotRecord,
    MatchRecord,
    MatchStatus,
    NotFoundError,
    PERSON_KIND,
    ScheduledMatch,
    SeatFaults,
    SlotTakenError,
    StorageError,
    Store,
    TournamentRecord,
    TournamentStatus,
    Wire,
)
from arena.storage.connections import Database
from arena.storage.blocks import number_json
from arena.storage.events import EventLog, dumps, status_of
from arena.storage.hosted_table import HostedTable
from arena.storage.key_table import DealKeyTable
from arena.storage.presence import PresenceTable
from arena.storage.queue import SlotQueue, scheduled
from arena.storage.open_names import OpenNameTable
from arena.storage.reveal_table import RevealTable

log = structlog.get_logger(__name__)

# Names per IN (...) list: a ladder page's lines in one statement, well
# under both databases' limits on a statement's parameters.
_NAMES_PER_QUERY = 400


def _loads(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def _faults_from(value: Any) -> list[SeatFaults] | None:
    if value is None:
        return None
    return [SeatFaults(**f) for f in value]


class SqlStore(EventLog, SlotQueue, DealKeyTable, PresenceTable, RevealTable, HostedTable,
               OpenNameTable, Store):
    """A :class:`Store` on one SQL database (see the module text)."""

    def __init__(self, db: Database, *, node: str | None = None) -> None:
        EventLog.__init__(self)
        self.db = db
        # The arena node this store serves: stamped on the matches it creates,
        # and the one whose running matches abort_unfinished aborts.
        self.node = node
        self.migrated_from = 0  # the schema version found on open (set by the backend)

    def close(self) -> None:
        locks = getattr(self, "_node_locks", None)
        if locks is not None:  # the node name is free again (arena.storage.node_lock)
            locks.close()
            self._node_locks = None
        self.db.close()

    def schema_version(self) -> int:
        with self.db.read() as db:
            return int(db.execute("SELECT version FROM schema_version").fetchone()[0])

    # -- bots -------------------------------------------------------------
    @staticmethod
    def _bot(row: Any) -> BotRecord:
        return BotRecord(name=row["name"], token_hash=row["token_hash"],
                         created_at=row["created_at"], owner=row["owner"],
                         kind=row["kind"], removed=bool(row["removed"]))

    def add_bot(self, name: str, token_hash: str | None, *, owner: str | None = None,
                kind: str = "remote") -> BotRecord:
        record = BotRecord(name=name, token_hash=token_hash, created_at=time.time(),
                           owner=owner, kind=kind)
        try:
            with self.db.tx() as db:
                db.execute("INSERT INTO bots (name, token_hash, owner, kind, created_at)"
                           " VALUES (?, ?, ?, ?, ?)",
                           (name, token_hash, owner, kind, record.created_at))
        except self.db.integrity_error as exc:
            what = "token" if "token_hash" in str(exc) else "name"
            raise AlreadyExistsError(f"a bot with that {what} exists already: {name!r}") from None
        return record

    def ensure_bot(self, name: str, *, kind: str = "remote") -> BotRecord:
        with self.db.tx() as db:
            db.execute("INSERT INTO bots (name, token_hash, kind, created_at)"
                       " VALUES (?, NULL, ?, ?) ON CONFLICT DO NOTHING", (name, kind, time.time()))
            row = db.execute("SELECT * FROM bots WHERE name = ?", (name,)).fetchone()
        return self._bot(row)

    def get_bot(self, name: str) -> BotRecord | None:
        with self.db.read() as db:
            row = db.execute("SELECT * FROM bots WHERE name = ?", (name,)).fetchone()
        return None if row is None else self._bot(row)

    def people_among(self, names: Iterable[str]) -> set[str]:
        wanted = sorted(set(names))
        found: set[str] = set()
        with self.db.read() as db:
            for i in range(0, len(wanted), _NAMES_PER_QUERY):
                chunk = wanted[i:i + _NAMES_PER_QUERY]
                marks = ", ".join("?" for _ in chunk)
                rows = db.execute(f"SELECT name FROM bots WHERE kind = ? AND name IN ({marks})",
                                  (PERSON_KIND, *chunk)).fetchall()
                found.update(str(r[0]) for r in rows)
        return found

    def find_bot_by_token_hash(self, token_hash: str) -> BotRecord | None:
        """The bot owning that token; removed bots are never found."""
        with self.db.read() as db:
            row = db.execute("SELECT * FROM bots WHERE token_hash = ? AND removed = 0",
                             (token_hash,)).fetchone()
        return None if row is None else self._bot(row)

    def set_token_hash(self, name: str, token_hash: str) -> None:
        try:
            with self.db.tx() as db:
                cur = db.execute("UPDATE bots SET token_hash = ? WHERE name = ?",
                                 (token_hash, name))
                if cur.rowcount == 0:
                    raise NotFoundError(f"no bot named {name!r}")
        except self.db.integrity_error:
            raise AlreadyExistsError("another bot has that token already") from None

    def remove_bot(self, name: str) -> None:
        with self.db.tx() as db:
            cur = db.execute("UPDATE bots SET removed = 1 WHERE name = ?", (name,))
            if cur.rowcount == 0:
                raise NotFoundError(f"no bot named {name!r}")

    def list_bots(self) -> list[BotRecord]:
        with self.db.read() as db:
            return [self._bot(r) for r in db.execute("SELECT * FROM bots ORDER BY name")]

    # -- matches ----------------------------------------------------------
    @staticmethod
    def _match(row: Any, *, full: bool = True) -> MatchRecord:
        return MatchRecord(
            id=row["id"], game=row["game"], players=_loads(row["players"]),
            rules=_loads(row["rules"]), limits=_loads(row["limits"]),
            status=MatchStatus(row["status"]), started_at=row["started_at"],
            finished_at=row["finished_at"], tournament_id=row["tournament_id"],
            result=_loads(row["result"]),
            reveal=_loads(row["reveal"]) if full else None,
            faults=_faults_from(_loads(row["faults"])),
            latency_ms=_loads(row["latency_ms"]),
            abort_reason=row["abort_reason"], seed=row["seed"], node=row["node"])

    def create_match(self, record: MatchRecord) -> None:
        """Insert ``record`` as ``running`` (its status field is ignored)."""
        try:
            with self.db.tx() as db:
                db.execute(
                    "INSERT INTO matches (id, game, players, rules, limits, status, started_at,"
                    " tournament_id, seed, node) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (record.id, record.game, dumps(list(record.players)), dumps(record.rules),
                     dumps(record.limits), MatchStatus.RUNNING.value, record.started_at,
                     record.tournament_id, record.seed, record.node or self.node))
                db.executemany(
                    "INSERT INTO match_players (match_id, seat, bot, started_at)"
                    " VALUES (?, ?, ?, ?)",
                    [(record.id, seat, bot, record.started_at)
                     for seat, bot in enumerate(record.players)])
        except self.db.integrity_error:
            raise AlreadyExistsError(f"a match with id {record.id!r} exists already") from None

    def finish_match(self, match_id: str, *, result: Wire, reveal: list[Wire],
                     faults: list[SeatFaults], latency_ms: list[list[float]],
                     finished_at: float, slot: tuple[str, int] | None = None) -> None:
        """Mark finished; with ``slot`` also fill that schedule slot, in the
        same transaction (SlotTakenError if it holds a finished match)."""
        lock = self.db.dialect.for_update
        with self.db.tx(durable=True) as db:
            self._forget(match_id)
            if slot is not None:
                # The slot's row is locked first: of two nodes finishing a
                # match for one slot, the second waits here and then sees the
                # first one's match.
                self._check_slot_free(db, slot, match_id)
            row = db.execute(f"SELECT status, players FROM matches WHERE id = ?{lock}",
                             (match_id,)).fetchone()
            if row is None:
                raise NotFoundError(f"no match {match_id!r}")
            status = MatchStatus(row[0])
            if status is not MatchStatus.RUNNING:
                raise StorageError(
                    f"match {match_id!r} is {status.value}, not running; it cannot be finished")
            n_seats = len(_loads(row[1]))
            if len(faults) != n_seats or len(latency_ms) != n_seats:
                raise StorageError(
                    f"match {match_id!r} has {n_seats} seats but got {len(faults)} fault "
                    f"records and {len(latency_ms)} latency lists")
            db.execute(
                "UPDATE matches SET status = ?, finished_at = ?, result = ?, reveal = ?,"
                " faults = ?, latency_ms = ? WHERE id = ?",
                (MatchStatus.FINISHED.value, finished_at, dumps(result), dumps(reveal),
                 dumps([asdict(f) for f in faults]), number_json(latency_ms).decode("ascii"), match_id))
            if slot is not None:
                db.execute("UPDATE schedule SET match_id = ?, lease_node = NULL,"
                           " lease_until = NULL WHERE tournament_id = ? AND slot = ?",
                           (match_id, slot[0], slot[1]))

    def _check_slot_free(self, db: Any, slot: tuple[str, int], match_id: str) -> None:
        tournament_id, index = slot
        row = db.execute("SELECT match_id FROM schedule WHERE tournament_id = ? AND slot = ?"
                         + self.db.dialect.for_update, (tournament_id, index)).fetchone()
        if row is None:
            raise NotFoundError(f"tournament {tournament_id!r} has no slot {index}")
        held = row[0]
        if held is not None and held != match_id and status_of(db, held) is MatchStatus.FINISHED:
            raise SlotTakenError(
                f"slot {index} of tournament {tournament_id!r} already holds finished match "
                f"{held!r}; match {match_id!r} is not counted (the slot was played twice)")

    def abort_match(self, match_id: str, reason: str, *,
                    faults: list[SeatFaults] | None = None) -> None:
        """Mark a running match aborted (``finished_at`` = when it stopped).

        Aborting an aborted match does nothing; a finished match stays
        finished (StorageError): a result, once counted, is never withdrawn.
        """
        with self.db.tx(durable=True) as db:
            self._forget(match_id)
            status = status_of(db, match_id)
            if status is MatchStatus.ABORTED:
                return
            if status is MatchStatus.FINISHED:
                raise StorageError(f"match {match_id!r} is finished; it cannot be aborted")
            db.execute(
                "UPDATE matches SET status = ?, abort_reason = ?, finished_at = ?,"
                " faults = COALESCE(?, faults) WHERE id = ?",
                (MatchStatus.ABORTED.value, reason, time.time(),
                 None if faults is None else dumps([asdict(f) for f in faults]), match_id))

    def abort_unfinished(self, reason: str = "server restarted", *,
                         node: str | None = None) -> list[str]:
        node = node if node is not None else self.node
        # Without a node name: the matches stored without one, never another
        # node's (arena.storage.node_lock says when that is safe).
        where, args = ("status = ? AND node IS NULL", [MatchStatus.RUNNING.value]) \
            if node is None else ("status = ? AND node = ?", [MatchStatus.RUNNING.value, node])
        with self.db.tx(durable=True) as db:
            self._forget()
            ids = [r[0] for r in db.execute(
                f"SELECT id FROM matches WHERE {where} ORDER BY started_at", args)]
            db.execute(f"UPDATE matches SET status = ?, abort_reason = ?, finished_at = ?"
                       f" WHERE {where}", [MatchStatus.ABORTED.value, reason, time.time(), *args])
        if ids:
            log.warning("storage.aborted_unfinished", count=len(ids), reason=reason, node=node)
        return ids

    def get_match(self, match_id: str) -> MatchRecord:
        with self.db.read() as db:
            row = db.execute("SELECT * FROM matches WHERE id = ?", (match_id,)).fetchone()
        if row is None:
            raise NotFoundError(f"no match {match_id!r}")
        return self._match(row)

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
        with self.db.read() as db:
            rows = db.execute(sql, [*args, limit, offset]).fetchall()
        return [self._match(r, full=False) for r in rows]

    def count_matches(self, *, bot: str | None = None, tournament_id: str | None = None,
                      status: MatchStatus | None = None) -> int:
        where, args = self._where(bot, tournament_id, status)
        with self.db.read() as db:
            return int(db.execute(f"SELECT COUNT(*) FROM matches m {where}",
                                  args).fetchone()[0])

    def finished_matches(self, *, tournament_id: str | None = None,
                         bot: str | None = None) -> list[MatchRecord]:
        """Every finished match (oldest first, without ``reveal``): the input
        of standings and rating charts."""
        where, args = self._where(bot, tournament_id, MatchStatus.FINISHED)
        with self.db.read() as db:
            rows = db.execute(f"SELECT m.* FROM matches m {where}"
                              " ORDER BY m.finished_at, m.rowid", args).fetchall()
        return [self._match(r, full=False) for r in rows]

    # -- tournaments --------------------------------------------------------
    @staticmethod
    def _tournament(row: Any) -> TournamentRecord:
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
            with self.db.tx(durable=True) as db:
                db.execute("INSERT INTO tournaments (id, name, game, config, status, created_at,"
                           " finished_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                           (record.id, record.name, record.game, dumps(record.config),
                            TournamentStatus(record.status).value, record.created_at,
                            record.finished_at))
                db.executemany(
                    "INSERT INTO schedule (tournament_id, slot, players, seed, match_id,"
                    " attempts, extra) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [(record.id, s.slot, dumps(list(s.players)), s.seed, s.match_id,
                      s.attempts, dumps(s.extra)) for s in schedule])
        except self.db.integrity_error as exc:
            raise AlreadyExistsError(
                f"tournament {record.id!r} or one of its slots exists already ({exc})") from None

    def get_tournament(self, tournament_id: str) -> TournamentRecord:
        with self.db.read() as db:
            row = db.execute("SELECT * FROM tournaments WHERE id = ?",
                             (tournament_id,)).fetchone()
        if row is None:
            raise NotFoundError(f"no tournament {tournament_id!r}")
        return self._tournament(row)

    def list_tournaments(self) -> list[TournamentRecord]:
        """Newest first."""
        with self.db.read() as db:
            rows = db.execute("SELECT * FROM tournaments ORDER BY created_at DESC, rowid DESC")
            return [self._tournament(r) for r in rows]

    def set_tournament_status(self, tournament_id: str, status: TournamentStatus) -> None:
        status = TournamentStatus(status)
        ended = status in (TournamentStatus.FINISHED, TournamentStatus.CANCELLED)
        with self.db.tx(durable=True) as db:
            cur = db.execute("UPDATE tournaments SET status = ?, finished_at = ? WHERE id = ?",
                             (status.value, time.time() if ended else None, tournament_id))
            if cur.rowcount == 0:
                raise NotFoundError(f"no tournament {tournament_id!r}")

    def get_schedule(self, tournament_id: str) -> list[ScheduledMatch]:
        with self.db.read() as db:
            rows = db.execute("SELECT * FROM schedule WHERE tournament_id = ? ORDER BY slot",
                              (tournament_id,)).fetchall()
            if not rows and db.execute("SELECT 1 FROM tournaments WHERE id = ?",
                                       (tournament_id,)).fetchone() is None:
                raise NotFoundError(f"no tournament {tournament_id!r}")
        return [scheduled(r) for r in rows]

    def add_schedule(self, tournament_id: str, schedule: list[ScheduledMatch]) -> None:
        with self.db.tx(durable=True) as db:
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
                [(tournament_id, s.slot, dumps(list(s.players)), s.seed, s.match_id,
                  s.attempts, dumps(s.extra)) for s in schedule])

    def extend_schedule(self, tournament_id: str, slots: list[ScheduledMatch]) -> bool:
        if not slots:
            return False
        first = min(s.slot for s in slots)
        try:
            with self.db.tx(durable=True) as db:
                if db.execute("SELECT 1 FROM tournaments WHERE id = ?",
                              (tournament_id,)).fetchone() is None:
                    raise NotFoundError(f"no tournament {tournament_id!r}")
                row = db.execute("SELECT COUNT(*) FROM schedule WHERE tournament_id = ?",
                                 (tournament_id,)).fetchone()
                if row[0] != first:
                    return False
                db.executemany(
                    "INSERT INTO schedule (tournament_id, slot, players, seed, match_id,"
                    " attempts, extra) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [(tournament_id, s.slot, dumps(list(s.players)), s.seed, s.match_id,
                      s.attempts, dumps(s.extra)) for s in slots])
        except self.db.integrity_error:
            return False  # two nodes appended at once: the other's round stands
        return True

    def complete_slot(self, tournament_id: str, slot: int, match_id: str) -> None:
        with self.db.tx(durable=True) as db:
            if status_of(db, match_id) is not MatchStatus.FINISHED:
                raise StorageError(f"match {match_id!r} is not finished; only a finished "
                                   f"match completes slot {slot}")
            cur = db.execute("UPDATE schedule SET match_id = ? WHERE tournament_id = ?"
                             " AND slot = ?", (match_id, tournament_id, slot))
            if cur.rowcount == 0:
                raise NotFoundError(f"tournament {tournament_id!r} has no slot {slot}")

    def note_attempt(self, tournament_id: str, slot: int) -> None:
        with self.db.tx() as db:
            cur = db.execute("UPDATE schedule SET attempts = attempts + 1"
                             " WHERE tournament_id = ? AND slot = ?", (tournament_id, slot))
            if cur.rowcount == 0:
                raise NotFoundError(f"tournament {tournament_id!r} has no slot {slot}")
