"""Hosted bots' versions in the store, where every node of it sees them.

A version is one upload of a bot's code (:mod:`arena.hosting.versions`
gives it meaning; this module only keeps it). Three tables:

* ``hosted_versions``: the record (status, reason, files, run command,
  validation result, match list) under the key (bot, version). The number
  is allocated inside the insert (the bot's highest number plus one), and
  the key refuses a second row with it: two nodes submitting at once get
  v1 and v2, never two "v1". An insert that lost that race is retried.
* ``hosted_uploads``: the upload as sent (at most the upload limit), so any
  node can unpack and build it.
* ``hosted_logs``: the build log and the stderr of each match, each already
  cut to its cap by the hosting layer; only the newest ``keep`` stderr logs
  of a version stay.

One node builds a version: it *claims* the build (``build_node``,
``build_until``), renews the claim while building, and another node takes
it over only after the claim ran out (a node that died mid-build), judged
on the database's clock as slot leases are (:mod:`arena.storage.lease`).
One node plays a version's validation match, claimed the same way
(``validation_node``, ``validation_until``).

A hosted bot sits at one table of the whole store at a time: the node that
seats it in a ladder or validation match holds its *seat* (``hosted_seats``:
one row per bot, the node and until when), renews it while the match plays
and gives it back at the end; a node that died loses it when it runs out.

Records cross this module as plain dicts of the column names (JSON columns
decoded); :class:`arena.hosting.versions.BotVersion` is built from them above.
"""

from __future__ import annotations

import json
import random
import time
from typing import Any

from arena.storage.base import NotFoundError, StorageError
from arena.storage.connections import Database
from arena.storage.lease import Clock, Lease

BUILDING = "building"  # the one status this layer needs to know (claims)
READY = "ready"
_JSON = ("files", "run", "matches", "validation")
_FIELDS = ("status", "lang", "game", "filename", "content_hash", "created_at", "built_at",
           "build_seconds", "reason", "files", "run", "matches", "validation")
# Two nodes inserting one bot's next number at once: the loser retries with
# the number after the winner's, after a short random pause that grows with
# each loss (without it a node submitting in a loop can win every race and
# starve the other). Uploads are rate-limited per bot, so a collision is
# rare in use; this many losses in a row means something else is wrong.
NUMBER_ATTEMPTS = 32
# The three leases of this module (see arena.storage.lease).
BUILD = Lease("hosted_versions", ("bot", "version"), "build_node", "build_until")
VALIDATION = Lease("hosted_versions", ("bot", "version"), "validation_node", "validation_until")
SEAT = Lease("hosted_seats", ("bot",), "node", "until", own_row=True)


class VersionNumberError(StorageError):
    """No version number could be allocated (the inserts kept colliding)."""


def _record(row: Any) -> dict[str, Any]:
    record = {key: row[key] for key in ("bot", "version", *_FIELDS, "build_node", "build_until")}
    for key in _JSON:
        record[key] = None if record[key] is None else json.loads(record[key])
    return record


def _values(record: dict[str, Any]) -> list[Any]:
    return [json.dumps(record.get(key)) if key in _JSON and record.get(key) is not None
            else record.get(key) for key in _FIELDS]


class HostedTable:
    """The hosted-version methods of :class:`arena.storage.store.SqlStore`."""

    db: Database

    def add_hosted_version(self, record: dict[str, Any], upload: bytes) -> dict[str, Any]:
        """Store a new version of ``record["bot"]`` with the next number and
        its upload, in one transaction; the record as stored."""
        for key in ("files", "run", "matches"):
            record.setdefault(key, [])
        columns = ", ".join(_FIELDS)
        marks = ", ".join("?" for _ in _FIELDS)
        for attempt in range(NUMBER_ATTEMPTS):
            try:
                with self.db.tx(durable=True) as db:
                    number = int(db.execute(
                        "SELECT COALESCE(MAX(version), 0) + 1 FROM hosted_versions WHERE bot = ?",
                        (record["bot"],)).fetchone()[0])
                    # Two nodes may read the same highest number; the key
                    # lets only one of them insert it.
                    db.execute(f"INSERT INTO hosted_versions (bot, version, {columns})"
                               f" VALUES (?, ?, {marks})",
                               (record["bot"], number, *_values(record)))
                    db.execute("INSERT INTO hosted_uploads (bot, version, data) VALUES (?, ?, ?)",
                               (record["bot"], number, upload))
            except self.db.integrity_error:
                # Another node took that number meanwhile: take the next.
                time.sleep(random.uniform(0, 0.002 * (attempt + 1)))
                continue
            return {**record, "version": int(number), "build_node": None, "build_until": None}
        raise VersionNumberError(f"no version number for bot {record['bot']!r} after "
                                 f"{NUMBER_ATTEMPTS} attempts: too many uploads at once")

    def import_hosted_version(self, record: dict[str, Any], upload: bytes) -> bool:
        """Store a version under the number it has (one an older arena kept
        as files); False if the bot has that number already."""
        for key in ("files", "run", "matches"):
            record.setdefault(key, [])
        columns = ", ".join(_FIELDS)
        with self.db.tx(durable=True) as db:
            cur = db.execute(f"INSERT INTO hosted_versions (bot, version, {columns}) VALUES"
                             f" (?, ?, {', '.join('?' for _ in _FIELDS)}) ON CONFLICT DO NOTHING",
                             (record["bot"], record["version"], *_values(record)))
            if cur.rowcount != 1:
                return False
            db.execute("INSERT INTO hosted_uploads (bot, version, data) VALUES (?, ?, ?)",
                       (record["bot"], record["version"], upload))
        return True

    def save_hosted_version(self, record: dict[str, Any]) -> None:
        """Write every field of an existing version (a finished build ends its claim)."""
        sets = ", ".join(f"{key} = ?" for key in _FIELDS)
        ends_claim = record["status"] != BUILDING
        with self.db.tx(durable=True) as db:
            cur = db.execute(
                f"UPDATE hosted_versions SET {sets}"
                + (", build_node = NULL, build_until = NULL" if ends_claim else "")
                + " WHERE bot = ? AND version = ?",
                (*_values(record), record["bot"], record["version"]))
            if cur.rowcount == 0:
                raise NotFoundError(f"bot {record['bot']!r} has no version {record['version']}")

    def hosted_version(self, bot: str, version: int) -> dict[str, Any] | None:
        with self.db.read() as db:
            row = db.execute("SELECT * FROM hosted_versions WHERE bot = ? AND version = ?",
                             (bot, version)).fetchone()
        return None if row is None else _record(row)

    def hosted_versions(self, bot: str) -> list[dict[str, Any]]:
        """Every version of ``bot``, oldest first."""
        with self.db.read() as db:
            rows = db.execute("SELECT * FROM hosted_versions WHERE bot = ? ORDER BY version",
                              (bot,)).fetchall()
        return [_record(r) for r in rows]

    def hosted_active(self, bot: str) -> dict[str, Any] | None:
        """The newest ready version of ``bot`` (the one that plays), or None."""
        with self.db.read() as db:
            row = db.execute("SELECT * FROM hosted_versions WHERE bot = ? AND status = ?"
                             " ORDER BY version DESC LIMIT 1", (bot, READY)).fetchone()
        return None if row is None else _record(row)

    def hosted_ready(self) -> list[dict[str, Any]]:
        """The version that plays of every bot not removed: one row per bot,
        from an index, however long the bots' histories."""
        with self.db.read() as db:
            rows = db.execute(
                "SELECT v.* FROM (SELECT bot, MAX(version) AS newest FROM hosted_versions"
                "  WHERE status = ? GROUP BY bot) m"
                " JOIN hosted_versions v ON v.bot = m.bot AND v.version = m.newest"
                " LEFT JOIN bots b ON b.name = v.bot"
                " WHERE COALESCE(b.removed, 0) = 0 ORDER BY v.bot", (READY,)).fetchall()
        return [_record(r) for r in rows]

    def hosted_building(self) -> list[dict[str, Any]]:
        """Every version still building (claimed or not), oldest first."""
        with self.db.read() as db:
            rows = db.execute("SELECT * FROM hosted_versions WHERE status = ?"
                              " ORDER BY created_at, bot, version", (BUILDING,)).fetchall()
        return [_record(r) for r in rows]

    def hosted_upload(self, bot: str, version: int) -> bytes | None:
        with self.db.read() as db:
            row = db.execute("SELECT data FROM hosted_uploads WHERE bot = ? AND version = ?",
                             (bot, version)).fetchone()
        return None if row is None else bytes(row[0])

    def claim_hosted_build(self, bot: str, version: int, node: str, lease_s: float) -> bool:
        """``node`` builds the version unless another node's claim is live
        (it may renew its own); False when it is not building or taken."""
        with self.db.tx() as db:
            return BUILD.claim(db, Clock.of(self.db.dialect), (bot, version), node, lease_s,
                               when="status = ?", when_args=(BUILDING,)) is not None

    def claim_hosted_validation(self, bot: str, version: int, node: str, lease_s: float) -> bool:
        """``node`` plays the version's validation match unless it has a
        result or another node's claim is live; False then."""
        with self.db.tx() as db:
            return VALIDATION.claim(db, Clock.of(self.db.dialect), (bot, version), node, lease_s,
                                    when="validation IS NULL") is not None

    def release_hosted_build(self, bot: str, version: int, node: str) -> None:
        """``node`` stopped building without finishing (cancelled): anyone may claim it."""
        with self.db.tx() as db:
            BUILD.release(db, (bot, version), node)

    def claim_hosted_seat(self, bot: str, node: str, lease_s: float) -> bool:
        """``node`` seats ``bot`` for ``lease_s`` seconds of the database's
        clock (or renews its own seat); False while another node's seat on
        it is live. One statement: two nodes claiming at once, one wins."""
        with self.db.tx() as db:
            return SEAT.claim(db, Clock.of(self.db.dialect), (bot,), node, lease_s) is not None

    def release_hosted_seat(self, bot: str, node: str) -> None:
        """``node``'s match with ``bot`` ended: any node may seat it again."""
        with self.db.tx() as db:
            SEAT.release(db, (bot,), node)

    def release_node_seats(self, node: str) -> list[str]:
        """Give back every seat ``node`` holds (a restarted node: the matches
        they were for died with its old process); the bots released."""
        with self.db.tx() as db:
            rows = SEAT.release_node(db, node)
        return sorted(r[0] for r in rows)

    def hosted_seats_elsewhere(self, node: str) -> set[str]:
        """The hosted bots another node has seated now (its seat is live)."""
        live, args = SEAT.live(Clock.of(self.db.dialect))
        with self.db.read() as db:
            rows = db.execute(f"SELECT bot FROM hosted_seats WHERE node <> ? AND {live}",
                              (node, *args)).fetchall()
        return {r[0] for r in rows}

    def keep_hosted_log(self, bot: str, version: int, name: str, data: bytes, *,
                        keep: int | None = None) -> None:
        """Keep a log (replacing one of that name); with ``keep``, only the
        ``keep`` newest logs of the version whose names start like this one's
        (up to its first ``/``) stay."""
        with self.db.tx() as db:
            db.execute("DELETE FROM hosted_logs WHERE bot = ? AND version = ? AND name = ?",
                       (bot, version, name))
            db.execute("INSERT INTO hosted_logs (bot, version, name, data, at)"
                       " VALUES (?, ?, ?, ?, ?)", (bot, version, name, data, time.time()))
            if keep is not None:
                prefix = name.split("/", 1)[0] + "/"
                old = db.execute(
                    "SELECT name FROM hosted_logs WHERE bot = ? AND version = ? AND"
                    " substr(name, 1, ?) = ? ORDER BY at DESC, name DESC",
                    (bot, version, len(prefix), prefix)).fetchall()[keep:]
                db.executemany("DELETE FROM hosted_logs WHERE bot = ? AND version = ?"
                               " AND name = ?", [(bot, version, r[0]) for r in old])

    def hosted_log(self, bot: str, version: int, name: str) -> bytes | None:
        with self.db.read() as db:
            row = db.execute("SELECT data FROM hosted_logs WHERE bot = ? AND version = ?"
                             " AND name = ?", (bot, version, name)).fetchone()
        return None if row is None else bytes(row[0])

    def note_hosted_match(self, bot: str, version: int, match_id: str) -> None:
        """Add ``match_id`` to the version's matches (once)."""
        with self.db.tx() as db:
            row = db.execute("SELECT matches FROM hosted_versions WHERE bot = ? AND version = ?"
                             + self.db.dialect.for_update, (bot, version)).fetchone()
            if row is None:
                raise NotFoundError(f"bot {bot!r} has no version {version}")
            matches = json.loads(row[0])
            if match_id not in matches:
                matches.append(match_id)
                db.execute("UPDATE hosted_versions SET matches = ? WHERE bot = ? AND version = ?",
                           (json.dumps(matches), bot, version))

    def drop_hosted_versions(self, bot: str, numbers: list[int]) -> None:
        """Remove those versions of ``bot`` with their uploads and logs."""
        with self.db.tx() as db:
            for table in ("hosted_logs", "hosted_uploads", "hosted_versions"):
                db.executemany(f"DELETE FROM {table} WHERE bot = ? AND version = ?",
                               [(bot, n) for n in numbers])
