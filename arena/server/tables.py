"""The server's running tables: each match's table built, run and forgotten.

:class:`TableRunner` makes a :class:`~arena.server.table.Table` for a list
of seats (its deck source, engine and clock), runs it as a task of its own
task set and forgets it when it ends, whatever the end. Structured
concurrency: ``cancel`` at shutdown cancels every table, which then ends
its match as aborted (never half-counted). Seats come from
``arena.server.seating``; the store writer, live hub and metrics are the
server's, shared by all its tables.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from typing import Any

from arena.games.base import GameSpec
from arena.live import SERVER_SHUTTING_DOWN, LiveHub
from arena.metrics import Metrics
from arena.server.config import ServerConfig
from arena.server.connection import BotConnection
from arena.server.matches import new_match_id
from arena.server.seats import Seat
from arena.server.table import Table, TimeLimits
from arena.storage.base import Store
from arena.storage.deal_keys import LADDER_TABLE, DealKeyring
from arena.storage.writer import StoreWriter
from protocol.deals import KeyedDeals, new_deal_key


class TableRunner:
    """Builds and runs one server's tables; ``tables`` are those running now."""

    def __init__(self, config: ServerConfig, store: Store, *, writer: StoreWriter, hub: LiveHub,
                 metrics: Metrics, on_seat_released: Callable[[BotConnection], None]) -> None:
        self.config = config
        self.store = store
        self.writer = writer
        self.hub = hub
        self.metrics = metrics
        self._on_seat_released = on_seat_released  # a bot's seat is free: back to the lobby
        self.tables: dict[str, Table] = {}
        self._tasks: set[asyncio.Task[Any]] = set()

    def new_table(self, seats: list[Seat], *, spec: GameSpec, rng: random.Random | None = None,
                  rules: dict | None = None, tournament_id: str | None = None,
                  seed: str | None = None, limits: TimeLimits | None = None,
                  deal_key: bytes | None = None,
                  slot: tuple[str, int] | None = None) -> Table:
        """A table of ``spec``'s game whose decks come from ``rng`` if given
        (``arena match --seed``), else from a keyed stream: the tournament's
        ``deal_key`` with ``seed`` naming the table, or a fresh key for this
        match alone (stored first: a failing store fails the table here)."""
        cfg = self.config
        match_id = new_match_id()
        keyed: KeyedDeals | None = None
        if rng is None:
            if deal_key is None:
                deal_key = new_deal_key()
                DealKeyring.for_store(self.store).record_ladder_key(match_id, deal_key)
            keyed = KeyedDeals(deal_key, seed or LADDER_TABLE)
            rng = keyed
        engine = spec.new_match(rules, rng, None)
        if keyed is not None and hasattr(engine, "deal_label"):
            keyed.label_of = lambda: engine.deal_label
        table = Table(match_id=match_id, spec=spec, engine=engine, seats=seats,
                      limits=limits or TimeLimits(cfg.decision_ms, cfg.bank_ms,
                                              cfg.timeouts_before_autopilot),
                      writer=self.writer, hub=self.hub, metrics=self.metrics,
                      tournament_id=tournament_id, seed=seed,
                      on_seat_released=self._on_seat_released,
                      abandon_grace_s=cfg.abandon_grace_s, slot=slot)
        self.tables[table.match_id] = table
        return table

    def launch(self, table: Table) -> asyncio.Task[Any]:
        """Run ``table`` as a task of this runner; it is forgotten when it ends."""
        task = asyncio.get_running_loop().create_task(self._run(table))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def play(self, table: Table) -> None:
        """Launch ``table`` and wait for its end. Cancelling the caller
        cancels the table (its match ends aborted) and waits for it a while."""
        task = self.launch(table)
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError as exc:
            # A reason given with the cancel (task.cancel(reason)) is the
            # abort's reason, unless the table was told one already.
            if exc.args and isinstance(exc.args[0], str):
                table.mark_cancelled(exc.args[0])
            task.cancel()
            await asyncio.wait([task], timeout=5)
            raise

    async def _run(self, table: Table) -> dict[str, Any] | None:
        try:
            return await table.run()
        except asyncio.CancelledError:
            raise
        except Exception:
            return None  # logged and stored as aborted by the table
        finally:
            self.tables.pop(table.match_id, None)

    def cancel(self, reason: str = SERVER_SHUTTING_DOWN) -> set[asyncio.Task[Any]]:
        """Cancel every running table (shutdown); the tasks, to wait for."""
        self.mark_cancelled(reason)
        tasks = set(self._tasks)
        for task in tasks:
            task.cancel()
        return tasks

    def mark_cancelled(self, reason: str, *, tournament_id: str | None = None,
                       slot: tuple[str, int] | None = None) -> None:
        """Tell the running tables (those of ``tournament_id`` or of ``slot``
        if given) why the cancel about to reach them ends their match: the
        reason their aborted match is stored with."""
        for table in list(self.tables.values()):
            if ((tournament_id is None or table.tournament_id == tournament_id)
                    and (slot is None or table.slot == slot)):
                table.mark_cancelled(reason)

    def reattach(self, conn: BotConnection) -> bool:
        """Give ``conn`` back the seat its token holds at a running table."""
        return any(table.reattach(conn) for table in list(self.tables.values()))

    def slot_started(self, slot: tuple[str, int]) -> bool:
        """Whether the table of ``slot``, if there is one, is stored as started
        (so cancelling it gives its bots back to the lobby)."""
        table = next((t for t in self.tables.values() if t.slot == slot), None)
        return table is None or self.hub.is_live(table.match_id)
