"""A tournament's schedule as a queue shared by several arena nodes.

A node *claims* an open slot (no finished match, no live lease) for
``lease_s`` seconds and renews the lease while the match runs. If the node
dies its lease runs out and another node's claim takes the slot and replays
it from the start. Finishing the match fills the slot in the same
transaction (``finish_match(..., slot=...)``, refused with SlotTakenError if
the slot was filled meanwhile), so each slot counts exactly once.

On PostgreSQL the claim is ``SELECT ... FOR UPDATE SKIP LOCKED``: nodes
claiming at the same moment never wait for each other and never get the same
slot. On SQLite the write transaction itself excludes other claimers.

Leases are judged on the database's clock (``now()`` of PostgreSQL), never
on a node's: a node whose clock runs ahead would otherwise see every other
node's lease as run out and take live slots over. (``now=`` overrides the
clock for tests that step time by hand.)
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any, Callable

from arena.storage.base import NotFoundError, ScheduledMatch, StorageError
from arena.storage.connections import Database
from arena.storage.lease import Clock, Lease

# A slot's lease: the node playing its match and until when (see
# arena.storage.lease). A finished slot (match_id set) is never leased again.
SLOT = Lease("schedule", ("tournament_id", "slot"), "lease_node", "lease_until")
UNFINISHED = "match_id IS NULL"


@dataclass(frozen=True)
class SlotLease:
    """A slot claimed by ``node`` until ``until`` (the database's clock, seconds)."""

    slot: ScheduledMatch
    node: str
    until: float


def scheduled(row: Any) -> ScheduledMatch:
    return ScheduledMatch(tournament_id=row["tournament_id"], slot=row["slot"],
                          players=json.loads(row["players"]), seed=row["seed"],
                          match_id=row["match_id"], attempts=row["attempts"],
                          extra=json.loads(row["extra"]))


def _check_lease(lease_s: float) -> None:
    if not lease_s > 0:
        raise StorageError(f"a lease must last more than 0 seconds, not {lease_s!r}")


class SlotQueue:
    """The queue methods of :class:`arena.storage.store.SqlStore`."""

    db: Database

    def claim_slot(self, tournament_id: str, node: str, lease_s: float, *,
                   now: float | None = None,
                   playable: Callable[[list[str]], bool] | None = None) -> SlotLease | None:
        """Claim the lowest open slot for ``node``; None when every slot is
        finished or leased. A claim counts as an attempt of the slot.

        ``playable(players)`` (if given) says whether this node can play a
        slot (its remote bots are connected here): slots it cannot play are
        skipped without a claim, so a slot waiting for bots on another node
        neither hides the later ones nor counts attempts."""
        _check_lease(lease_s)
        clock = Clock.of(self.db.dialect, now)
        free, args = SLOT.free(clock)
        is_open = f"{UNFINISHED} AND {free}"
        with self.db.tx() as db:
            if playable is None:
                row = db.execute(
                    f"SELECT * FROM schedule WHERE tournament_id = ? AND {is_open}"
                    " ORDER BY slot LIMIT 1" + self.db.dialect.skip_locked,
                    (tournament_id, *args)).fetchone()
            else:
                row = None
                for candidate in db.execute(
                        f"SELECT slot, players FROM schedule WHERE tournament_id = ? AND "
                        f"{is_open} ORDER BY slot", (tournament_id, *args)).fetchall():
                    if not playable(json.loads(candidate["players"])):
                        continue
                    row = db.execute(  # locked by another claimer: try the next
                        f"SELECT * FROM schedule WHERE tournament_id = ? AND slot = ? AND "
                        f"{is_open}" + self.db.dialect.skip_locked,
                        (tournament_id, candidate["slot"], *args)).fetchone()
                    if row is not None:
                        break
            if row is None:
                if db.execute("SELECT 1 FROM tournaments WHERE id = ?",
                              (tournament_id,)).fetchone() is None:
                    raise NotFoundError(f"no tournament {tournament_id!r}")
                return None
            # The row is locked by this transaction (the write lock on SQLite,
            # the row lock on PostgreSQL), so it is still open; only a clock
            # stepped back between the two statements could make it miss.
            until = SLOT.claim(db, clock, (tournament_id, row["slot"]), node, lease_s,
                               renew_own=False, when=UNFINISHED,
                               also_set="attempts = attempts + 1")
            if until is None:
                return None
        slot = scheduled(row)
        slot = dataclasses.replace(slot, attempts=slot.attempts + 1)
        return SlotLease(slot=slot, node=node, until=float(until))

    def lease_slot(self, tournament_id: str, slot: int, node: str, lease_s: float, *,
                   now: float | None = None) -> bool:
        """Lease one given slot to ``node`` if it is open (no finished match,
        no live lease); False if it is not. Unlike :meth:`claim_slot` it
        counts no attempt: the caller counts the tries that fail (a
        challenge's match that is aborted, not one deferred)."""
        _check_lease(lease_s)
        with self.db.tx() as db:
            return SLOT.claim(db, Clock.of(self.db.dialect, now), (tournament_id, slot), node,
                              lease_s, renew_own=False, when=UNFINISHED) is not None

    def open_slots(self, tournament_id: str) -> list[ScheduledMatch]:
        """The slots without a finished match that no live lease holds (on
        the database's clock): what the tournament still waits to start."""
        free, args = SLOT.free(Clock.of(self.db.dialect))
        with self.db.read() as db:
            rows = db.execute(f"SELECT * FROM schedule WHERE tournament_id = ? AND {UNFINISHED}"
                              f" AND {free} ORDER BY slot", (tournament_id, *args)).fetchall()
        return [scheduled(r) for r in rows]

    def leased_elsewhere(self, tournament_ids: list[str], node: str, *,
                         now: float | None = None) -> int:
        """Unfinished slots of these tournaments that a live lease of a node
        other than ``node`` holds: the tables other nodes are seating or
        playing for them now. A node that died stops counting once its
        leases run out."""
        if not tournament_ids:
            return 0
        live, args = SLOT.live(Clock.of(self.db.dialect, now))
        marks = ", ".join("?" for _ in tournament_ids)
        with self.db.read() as db:
            row = db.execute(f"SELECT COUNT(*) FROM schedule WHERE tournament_id IN ({marks})"
                             f" AND {UNFINISHED} AND {live} AND lease_node <> ?",
                             (*tournament_ids, *args, node)).fetchone()
        return int(row[0])

    def renew_lease(self, tournament_id: str, slot: int, node: str, lease_s: float, *,
                    now: float | None = None) -> bool:
        """Extend ``node``'s lease; False if the node no longer holds the slot
        (another node claimed it after the lease ran out, or it is finished):
        the node should then abandon its match."""
        _check_lease(lease_s)
        with self.db.tx() as db:
            return SLOT.renew(db, Clock.of(self.db.dialect, now), (tournament_id, slot), node,
                              lease_s, when=UNFINISHED) is not None

    def release_slot(self, tournament_id: str, slot: int, node: str) -> bool:
        """Give an unfinished slot back (its match was aborted) so any node
        can claim it at once; False if ``node`` did not hold it."""
        with self.db.tx() as db:
            return SLOT.release(db, (tournament_id, slot), node, when=UNFINISHED)

    def release_node_leases(self, node: str) -> list[int]:
        """Give back every unfinished slot ``node`` holds (a restarted node:
        its matches died with its old process, so nobody need wait out the
        leases). Returns the released slots."""
        with self.db.tx() as db:
            rows = SLOT.release_node(db, node, when=UNFINISHED)
        return sorted(int(r[1]) for r in rows)
