"""Where bots are connected, and what an organiser may do to a tournament's
state, for a store shared by several nodes.

**Presence.** A remote bot is one connection to one node, and its matches
must be played there. Each node that directs tournaments writes, every
poll, the names of the bots connected to it (``note_presence``); a row not
refreshed for ``fresh_s`` (judged on the database's clock, as leases are)
belongs to a node that died. The claim of a shared slot skips slots whose
bots are not on the claiming node, and the tournament's page reads the
rows to say where the bots it waits for are connected.

**Cancelling.** ``cancel_tournament`` is the organiser's stop: every node
sees the status and stops playing it. A runner starting (or resuming) a
tournament marks it running with ``mark_running``, which never revives a
cancelled one behind the organiser's back; only an explicit resume
(``reopen_tournament``) does.
"""

from __future__ import annotations

import time

from arena.storage.base import NotFoundError, StorageError, TournamentStatus
from arena.storage.connections import Database

# A node refreshes its rows every second or so; three polls missed (a busy
# node, a slow database) are tolerated before its bots count as gone.
PRESENCE_FRESH_S = 10.0


class TournamentOverError(StorageError):
    """The tournament is finished: there is nothing left to cancel."""


class PresenceTable:
    """The presence and tournament-state methods of :class:`arena.storage.store.SqlStore`."""

    db: Database

    def note_presence(self, node: str, bots: list[str], address: str | None = None) -> None:
        """The bots connected to ``node`` now (replacing what it said
        before), and the ``host:port`` where bots reach it, if known."""
        now = self.db.dialect.now
        wanted = set(bots)
        with self.db.tx() as db:
            # One statement refreshes the rows of the bots still here; only
            # the bots that came or left are written. (Every row deleted and
            # inserted again cost a node with 1,000 bots 1,001 statements
            # every poll, on the store's one thread.)
            db.execute(f"UPDATE presence SET seen_at = {now}, address = ? WHERE node = ?",
                       (address, node))
            had = {str(row[0]) for row in
                   db.execute("SELECT bot FROM presence WHERE node = ?", (node,)).fetchall()}
            gone = sorted(had - wanted)
            if gone:
                db.executemany("DELETE FROM presence WHERE node = ? AND bot = ?",
                               [(node, bot) for bot in gone])
            came = sorted(wanted - had)
            if came:
                db.executemany(f"INSERT INTO presence (bot, node, seen_at, address)"
                               f" VALUES (?, ?, {now}, ?)",
                               [(bot, node, address) for bot in came])

    def node_addresses(self, fresh_s: float = PRESENCE_FRESH_S) -> dict[str, str]:
        """node -> where bots reach it, for the nodes with fresh rows that said."""
        with self.db.read() as db:
            rows = db.execute(f"SELECT DISTINCT node, address FROM presence WHERE seen_at > "
                              f"{self.db.dialect.now} - ? AND address IS NOT NULL",
                              (fresh_s,)).fetchall()
        return {str(r[0]): str(r[1]) for r in rows}

    def drop_presence(self, node: str) -> None:
        """``node`` is stopping: none of its bots are connected any more."""
        with self.db.tx() as db:
            db.execute("DELETE FROM presence WHERE node = ?", (node,))

    def present_bots(self, fresh_s: float = PRESENCE_FRESH_S) -> dict[str, list[str]]:
        """bot -> the nodes it is connected to (sorted), from fresh rows only."""
        with self.db.read() as db:
            rows = db.execute(f"SELECT bot, node FROM presence WHERE seen_at > "
                              f"{self.db.dialect.now} - ? ORDER BY bot, node",
                              (fresh_s,)).fetchall()
        found: dict[str, list[str]] = {}
        for row in rows:
            found.setdefault(str(row[0]), []).append(str(row[1]))
        return found

    def mark_running(self, tournament_id: str) -> bool:
        """Mark the tournament running unless the organiser cancelled it;
        False if it is cancelled (the runner then plays nothing)."""
        with self.db.tx(durable=True) as db:
            row = db.execute("SELECT status FROM tournaments WHERE id = ?"
                             + self.db.dialect.for_update, (tournament_id,)).fetchone()
            if row is None:
                raise NotFoundError(f"no tournament {tournament_id!r}")
            if row[0] == TournamentStatus.CANCELLED.value:
                return False
            db.execute("UPDATE tournaments SET status = ?, finished_at = NULL WHERE id = ?",
                       (TournamentStatus.RUNNING.value, tournament_id))
        return True

    def cancel_tournament(self, tournament_id: str) -> bool:
        """Cancel a pending or running tournament; False if it was cancelled
        already. Raises TournamentOverError for a finished one."""
        with self.db.tx(durable=True) as db:
            row = db.execute("SELECT status FROM tournaments WHERE id = ?"
                             + self.db.dialect.for_update, (tournament_id,)).fetchone()
            if row is None:
                raise NotFoundError(f"no tournament {tournament_id!r}")
            if row[0] == TournamentStatus.FINISHED.value:
                raise TournamentOverError(f"tournament {tournament_id!r} is finished: "
                                          "there is nothing left to cancel")
            if row[0] == TournamentStatus.CANCELLED.value:
                return False
            db.execute("UPDATE tournaments SET status = ?, finished_at = ? WHERE id = ?",
                       (TournamentStatus.CANCELLED.value, time.time(), tournament_id))
        return True

    def reopen_tournament(self, tournament_id: str) -> bool:
        """An organiser resumes a cancelled tournament: it is pending again
        (True), ready for a runner; False if it was not cancelled."""
        with self.db.tx(durable=True) as db:
            cur = db.execute("UPDATE tournaments SET status = ?, finished_at = NULL"
                             " WHERE id = ? AND status = ?",
                             (TournamentStatus.PENDING.value, tournament_id,
                              TournamentStatus.CANCELLED.value))
            return cur.rowcount == 1
