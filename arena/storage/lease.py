"""Leases: one node holds a row for a while, judged on the database's clock.

Several things in the store are held by one node at a time: a tournament's
slot while its match plays (:mod:`arena.storage.queue`), a hosted version's
build and its validation match, a hosted bot's seat
(:mod:`arena.storage.hosted_table`). Each is the same conditional statement
on different columns: a node *claims* the row if it is free or the last
holder's lease ran out, the holder *renews* it while it works, and gives it
back (*release*) when it stops; a node that died simply stops renewing, and
the next claim after its lease ran out takes the row over.

A :class:`Lease` names where one kind of lease lives (table, key columns,
holder column, until column). Two shapes exist:

* the lease is two columns of a row that lives on its own (a slot, a
  version): releasing sets them to NULL;
* the row *is* the lease (``own_row``, a seat): claiming inserts it and
  releasing deletes it.

Every decision is one statement, so two nodes claiming at once cannot both
win: on SQLite the write transaction excludes the other writer, on
PostgreSQL the row lock (or the key's conflict) makes the second statement
see the first one's row. "Now" is the database's clock (``now()`` of
PostgreSQL), never a node's: a node whose clock runs ahead would otherwise
see every other node's lease as run out. A :class:`Clock` may pin it to a
given time instead, for tests that step time by hand.

The methods take the connection of a transaction the caller has opened, so a
claim can share it with the caller's other statements (a slot's claim also
counts an attempt).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from arena.storage.schema import Dialect


@dataclass(frozen=True)
class Clock:
    """"Now" in SQL and its parameters: the database's clock or a pinned time."""

    sql: str
    args: tuple[float, ...]

    @classmethod
    def of(cls, dialect: Dialect, now: float | None = None) -> Clock:
        return cls(dialect.now, ()) if now is None else cls("?", (now,))


@dataclass(frozen=True)
class Lease:
    """Where one kind of lease lives; see the module text."""

    table: str
    key: tuple[str, ...]  # the columns naming one row
    holder: str  # the node holding it (NULL: nobody)
    until: str  # when its lease runs out, seconds on the database's clock
    own_row: bool = False  # the row exists only while the lease does

    def _key_sql(self) -> str:
        return " AND ".join(f"{self.table}.{column} = ?" for column in self.key)

    def free(self, clock: Clock) -> tuple[str, tuple[Any, ...]]:
        """SQL (with its parameters) true of a row nobody holds: never
        leased, released, or its lease ran out."""
        return (f"({self.holder} IS NULL OR {self.until} IS NULL OR {self.until} < {clock.sql})",
                clock.args)

    def live(self, clock: Clock) -> tuple[str, tuple[Any, ...]]:
        """SQL (with its parameters) true of a row some node holds now."""
        return f"{self.until} >= {clock.sql}", clock.args

    def claim(self, tx: Any, clock: Clock, key: Sequence[Any], node: str, lease_s: float, *,
              renew_own: bool = True, when: str = "", when_args: Sequence[Any] = (),
              also_set: str = "") -> float | None:
        """``node`` holds the row for ``lease_s`` seconds if it is free (or,
        with ``renew_own``, already ``node``'s); the new until, or None when
        another node's lease is live (or ``when``, SQL the row must also
        meet, is false). ``also_set`` is more ``SET`` SQL of the same update."""
        if self.own_row:
            if when or also_set:  # its row has no other columns to test or set
                raise ValueError(f"the lease of {self.table} is its row: claim it without"
                                 " `when` or `also_set`")
            return self._claim_own_row(tx, clock, key, node, lease_s, renew_own)
        free, free_args = self.free(clock)
        mine, mine_args = (f" OR {self.holder} = ?", (node,)) if renew_own else ("", ())
        extra = f" AND ({when})" if when else ""
        row = tx.execute(
            f"UPDATE {self.table} SET {self.holder} = ?, {self.until} = {clock.sql} + ?"
            + (f", {also_set}" if also_set else "")
            + f" WHERE {self._key_sql()}{extra} AND ({free}{mine}) RETURNING {self.until}",
            (node, *clock.args, lease_s, *key, *when_args, *free_args, *mine_args)).fetchone()
        return None if row is None else float(row[0])

    def _claim_own_row(self, tx: Any, clock: Clock, key: Sequence[Any], node: str,
                       lease_s: float, renew_own: bool) -> float | None:
        # The key's conflict decides between two nodes inserting at once;
        # the conflicting row is taken over only when it is free (or ours).
        mine = f"{self.table}.{self.holder} = excluded.{self.holder} OR " if renew_own else ""
        columns = ", ".join((*self.key, self.holder, self.until))
        marks = ", ".join("?" for _ in self.key)
        row = tx.execute(
            f"INSERT INTO {self.table} ({columns}) VALUES ({marks}, ?, {clock.sql} + ?)"
            f" ON CONFLICT ({', '.join(self.key)}) DO UPDATE SET"
            f" {self.holder} = excluded.{self.holder}, {self.until} = excluded.{self.until}"
            f" WHERE {mine}{self.table}.{self.until} < {clock.sql} RETURNING {self.until}",
            (*key, node, *clock.args, lease_s, *clock.args)).fetchone()
        return None if row is None else float(row[0])

    def renew(self, tx: Any, clock: Clock, key: Sequence[Any], node: str, lease_s: float, *,
              when: str = "", when_args: Sequence[Any] = ()) -> float | None:
        """Extend ``node``'s lease; None if ``node`` does not hold the row
        (another node took it over after the lease ran out, it was released,
        or ``when`` is false). A holder whose lease ran out but that nobody
        took over still holds it."""
        extra = f" AND ({when})" if when else ""
        row = tx.execute(
            f"UPDATE {self.table} SET {self.until} = {clock.sql} + ?"
            f" WHERE {self._key_sql()} AND {self.holder} = ?{extra} RETURNING {self.until}",
            (*clock.args, lease_s, *key, node, *when_args)).fetchone()
        return None if row is None else float(row[0])

    def release(self, tx: Any, key: Sequence[Any], node: str, *, when: str = "",
                when_args: Sequence[Any] = ()) -> bool:
        """Give the row back so any node may claim it at once; False if
        ``node`` did not hold it (only the holder can release)."""
        extra = f" AND ({when})" if when else ""
        cur = tx.execute(f"{self._release_sql()} WHERE {self._key_sql()}"
                         f" AND {self.holder} = ?{extra}", (*key, node, *when_args))
        return bool(cur.rowcount == 1)

    def release_node(self, tx: Any, node: str, *, when: str = "",
                     when_args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Give back every row ``node`` holds (a node restarted: what it held
        died with its old process); the keys of the rows released."""
        extra = f" AND ({when})" if when else ""
        rows = tx.execute(f"{self._release_sql()} WHERE {self.holder} = ?{extra}"
                          f" RETURNING {', '.join(self.key)}", (node, *when_args)).fetchall()
        return [tuple(r) for r in rows]

    def _release_sql(self) -> str:
        if self.own_row:
            return f"DELETE FROM {self.table}"
        return f"UPDATE {self.table} SET {self.holder} = NULL, {self.until} = NULL"
