"""Deal keys kept in the database, for a store shared by several nodes.

A PostgreSQL arena has no folder every node can read, so a tournament's
deal key is kept in its own table, ``deal_keys``: every node of the
database deals from the same key, and a restarted node finds it. The first
key kept for a tournament wins (``INSERT ... ON CONFLICT DO NOTHING``, then
read back), so nodes creating the same tournament at the same moment still
end with one key and one commitment.

Only the dealing path (:class:`arena.storage.deal_keys.DealKeyring`),
``arena verify`` and the tournament API (both once the tournament is
finished, never before) read this table; exports and the public records
never do. The table is not granted to
any reader role (see docs/reliability.md, "Deal keys").
"""

from __future__ import annotations

import json
import time
from typing import Any

from arena.storage.base import NotFoundError, TournamentRecord
from arena.storage.blocks import dumps
from arena.storage.connections import Database


class DealKeyTable:
    """The deal-key methods of :class:`arena.storage.store.SqlStore`."""

    db: Database

    def keep_deal_key(self, tournament_id: str, key_hex: str, commitment: str) -> str:
        """Keep ``key_hex`` for the tournament unless a key is kept already;
        return the key kept (the first one)."""
        with self.db.tx(durable=True) as db:
            db.execute("INSERT INTO deal_keys (tournament_id, deal_key, commitment, created_at)"
                       " VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                       (tournament_id, key_hex, commitment, time.time()))
            row = db.execute("SELECT deal_key FROM deal_keys WHERE tournament_id = ?",
                             (tournament_id,)).fetchone()
        return str(row[0])

    def kept_deal_key(self, tournament_id: str) -> str | None:
        with self.db.read() as db:
            row = db.execute("SELECT deal_key FROM deal_keys WHERE tournament_id = ?",
                             (tournament_id,)).fetchone()
        return None if row is None else str(row[0])

    def kept_deal_key_ids(self) -> list[str]:
        with self.db.read() as db:
            rows = db.execute("SELECT tournament_id FROM deal_keys ORDER BY tournament_id"
                              ).fetchall()
        return [str(r[0]) for r in rows]

    def publish_deals(self, tournament_id: str, deals: dict[str, Any]) -> TournamentRecord:
        """Set the record's public ``config.deals`` (scheme and commitment)
        if it has none yet; return the record as stored. A tournament
        created without a commitment (by an older arena) gets it here,
        before its first match."""
        with self.db.tx(durable=True) as db:
            row = db.execute("SELECT config FROM tournaments WHERE id = ?"
                             + self.db.dialect.for_update, (tournament_id,)).fetchone()
            if row is None:
                raise NotFoundError(f"no tournament {tournament_id!r}")
            config = json.loads(row[0])
            if not (config.get("deals") or {}).get("commitment"):
                config["deals"] = deals
                db.execute("UPDATE tournaments SET config = ? WHERE id = ?",
                           (dumps(config), tournament_id))
        return self.get_tournament(tournament_id)  # type: ignore[attr-defined]
