"""Deferred reveals across nodes: which sealed matches are revealed, and to
which bots their ``reveal`` message has gone.

A sealed match (a duplicate deck set of several matches, protocol §6) is
revealed when the last match of its set is over, and that may happen on
any node of a shared store while the bots that played the set's other
matches are connected to other nodes. So the node that sees a set over
records its matches as *lifted* (``lift_reveals``, idempotent: any node may
record a set again after a crash), and every node asks which lifted
matches its own connected bots played and were not sent yet
(``pending_reveals``). Before sending, a node claims each (match, bot)
(``claim_reveals``): the first claim wins on the database, so a bot is sent
each reveal once, whichever node it is on, also across restarts. A claim
whose bot left before the message went out is given back
(``unclaim_reveals``), for the node it reconnects to.

Times are the database's clock, as leases and presence are.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from arena.storage.connections import Database

# A bot that reconnects is sent the reveals lifted this long ago at most:
# older ones it reads from the API (the pending list stays small).
PENDING_REVEAL_S = 24 * 3600.0
_CHUNK = 400  # names per IN (...) list, well under both databases' limits


class RevealTable:
    """The reveal methods of :class:`arena.storage.store.SqlStore`."""

    db: Database

    def lift_reveals(self, tournament_id: str, match_ids: Iterable[str]) -> int:
        """Record these matches as revealed (their deck set is played out);
        returns how many were not recorded before."""
        now = self.db.dialect.now
        added = 0
        with self.db.tx() as db:
            for match_id in sorted(set(match_ids)):
                cur = db.execute(f"INSERT INTO reveals_lifted (match_id, tournament_id, lifted_at)"
                                 f" VALUES (?, ?, {now}) ON CONFLICT DO NOTHING",
                                 (match_id, tournament_id))
                added += max(cur.rowcount, 0)
        return added

    def pending_reveals(self, bots: Sequence[str],
                        within_s: float = PENDING_REVEAL_S) -> list[tuple[str, str]]:
        """(match, bot) for every lifted match, lifted within ``within_s``,
        that one of ``bots`` played and has not been sent; oldest lift first."""
        now = self.db.dialect.now
        found: list[tuple[str, str]] = []
        names = sorted(set(bots))
        with self.db.read() as db:
            for i in range(0, len(names), _CHUNK):
                chunk = names[i:i + _CHUNK]
                marks = ", ".join("?" for _ in chunk)
                rows = db.execute(
                    f"SELECT DISTINCT l.match_id, p.bot, l.lifted_at FROM reveals_lifted l"
                    f" JOIN match_players p ON p.match_id = l.match_id"
                    f" WHERE l.lifted_at > {now} - ? AND p.bot IN ({marks})"
                    f" AND NOT EXISTS (SELECT 1 FROM reveal_deliveries d"
                    f"  WHERE d.match_id = l.match_id AND d.bot = p.bot)"
                    f" ORDER BY l.lifted_at, l.match_id, p.bot",
                    (within_s, *chunk)).fetchall()
                found.extend((str(r[0]), str(r[1])) for r in rows)
        return found

    def claim_reveals(self, pending: Iterable[tuple[str, str]], node: str) -> list[tuple[str, str]]:
        """Claim (match, bot) pairs for ``node`` to send; returns the ones
        this call won (another node may have claimed some first)."""
        now = self.db.dialect.now
        won = []
        with self.db.tx() as db:
            for match_id, bot in pending:
                cur = db.execute(f"INSERT INTO reveal_deliveries (match_id, bot, node, sent_at)"
                                 f" VALUES (?, ?, ?, {now}) ON CONFLICT DO NOTHING",
                                 (match_id, bot, node))
                if cur.rowcount == 1:
                    won.append((match_id, bot))
        return won

    def unclaim_reveals(self, claimed: Iterable[tuple[str, str]], node: str) -> None:
        """Give back claims ``node`` could not send (the bot left meanwhile)."""
        with self.db.tx() as db:
            for match_id, bot in claimed:
                db.execute("DELETE FROM reveal_deliveries WHERE match_id = ? AND bot = ?"
                           " AND node = ?", (match_id, bot, node))
