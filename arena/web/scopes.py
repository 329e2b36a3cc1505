"""Standings per scope, computed off the event loop and not too often.

A scope is ``ladder`` (matches outside tournaments), ``all``, or a
tournament id. Its :class:`ScopeTable` holds the finished matches, the
standings rows and, from the same pass, every bot's rating history and
matches, so a bot page is a few lookups.

Computing a table of thousands of matches takes seconds of Python (the
bootstrap intervals above all), and a thread doing it still holds the GIL
against the loop that times the bots. So a table is recomputed only when a
match finished in its scope, and then at most every
``max(refresh_s, COST_FACTOR x its last computation time)``: between two
computations a visitor gets the table of a moment ago and a refresh is
scheduled. Cheap tables (small stores) are thus always fresh; a request
waits up to ``MAX_WAIT_S`` for one rather than get a stale one.
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import structlog
from openskill.models import PlackettLuce

from arena.storage.base import MatchRecord, MatchStatus, Store
from arena.tournament.standings import _rate, compute_standings, counted
from arena.web.live import LADDER

log = structlog.get_logger(__name__)

Wire = dict[str, Any]
Runner = Callable[..., Awaitable[Any]]

ALL = "all"
PAGE = 500  # rows per store read when walking a whole result set
MAX_SCOPE_MATCHES = 200_000  # standings beyond this would need a summary table
COST_FACTOR = 5.0  # a scope's computations take at most ~1/COST_FACTOR of the time
MAX_WAIT_S = 0.25  # a request waits this long for a fresh table, else gets the last one
MAX_SCOPES = 32


@dataclass(frozen=True)
class ScopeTable:
    scope: str
    key: int  # finished matches in the scope when computed
    matches: list[MatchRecord]  # oldest first
    rows: list[Wire]
    by_bot: dict[str, Wire]
    histories: dict[str, list[Wire]]  # bot -> rating after each of its matches
    own: dict[str, list[int]]  # bot -> indices into ``matches``
    took_s: float
    done_at: float  # clock() when computed
    version: int = field(default=0)  # unique per computation, for caches built on it


def scope_key(store: Store, scope: str) -> int:
    """(any thread) Changes whenever a match of the scope finishes; raises
    NotFoundError for an unknown tournament."""
    tournament_id = None if scope in (LADDER, ALL) else scope
    if tournament_id is not None:
        store.get_tournament(tournament_id)
    return store.count_matches(tournament_id=tournament_id, status=MatchStatus.FINISHED)


def finished_matches(store: Store, tournament_id: str | None) -> list[MatchRecord]:
    finished = getattr(store, "finished_matches", None)
    if finished is not None:  # SqliteStore: one ordered query instead of pages
        return list(finished(tournament_id=tournament_id))
    out: list[MatchRecord] = []
    while len(out) < MAX_SCOPE_MATCHES:
        page = store.list_matches(tournament_id=tournament_id, status=MatchStatus.FINISHED,
                                  limit=PAGE, offset=len(out))
        out.extend(page)
        if len(page) < PAGE:
            break
    out.sort(key=lambda m: (m.finished_at or 0.0, m.id))  # oldest first
    return out


def rating_histories(matches: list[MatchRecord]) -> dict[str, list[Wire]]:
    """Every bot's ``rating_history`` in one pass (the same updates, in the
    same order, as :func:`arena.tournament.standings.rating_history`)."""
    model = PlackettLuce()
    ratings: dict[str, Any] = {}
    out: dict[str, list[Wire]] = collections.defaultdict(list)
    for match in counted(matches):
        _rate(model, ratings, match)
        for bot in dict.fromkeys(match.players):
            r = ratings[bot]
            out[bot].append({"match": match.id, "finished_at": match.finished_at,
                             "mu": r.mu, "sigma": r.sigma})
    return dict(out)


def compute_table(store: Store, scope: str, clock: Callable[[], float],
                  version: int) -> ScopeTable:
    """(a worker thread) Read and compute one scope's table."""
    t0 = time.perf_counter()
    key = scope_key(store, scope)
    tournament_id = None if scope in (LADDER, ALL) else scope
    matches = finished_matches(store, tournament_id)
    if scope == LADDER:
        matches = [m for m in matches if m.tournament_id is None]
    rows = [row.to_dict() for row in compute_standings(matches)]
    own: dict[str, list[int]] = collections.defaultdict(list)
    for i, m in enumerate(matches):
        for bot in dict.fromkeys(m.players):
            own[bot].append(i)
    took = time.perf_counter() - t0
    return ScopeTable(scope=scope, key=key, matches=matches, rows=rows,
                      by_bot={r["bot"]: r for r in rows}, histories=rating_histories(matches),
                      own=dict(own), took_s=took, done_at=clock(), version=version)


class ScopeCache:
    """The last table of each scope, refreshed as the module doc says."""

    def __init__(self, store: Store, run: Runner, *, refresh_s: float = 0.0,
                 clock: Callable[[], float] = time.monotonic,
                 max_scopes: int = MAX_SCOPES) -> None:
        self.store = store
        self._run = run
        self.refresh_s = refresh_s
        self._clock = clock
        self._max = max_scopes
        self._tables: collections.OrderedDict[str, ScopeTable] = collections.OrderedDict()
        self._inflight: dict[str, asyncio.Future[ScopeTable]] = {}
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._versions = itertools.count(1)  # next() is atomic: threads share it
        self.computations = 0

    def cooldown_s(self, table: ScopeTable) -> float:
        return max(self.refresh_s, COST_FACTOR * table.took_s)

    def peek(self, scope: str) -> ScopeTable | None:
        return self._tables.get(scope)

    async def get(self, scope: str) -> ScopeTable:
        """The scope's table: fresh, or the last one while a new one is due."""
        key = await self._run(scope_key, self.store, scope)
        while True:
            table = self._tables.get(scope)
            if table is not None and table.key == key:
                self._tables.move_to_end(scope)
                return table
            running = self._inflight.get(scope)
            if running is not None:
                if table is not None:
                    return table
                return await asyncio.shield(running)
            wait = 0.0 if table is None else \
                table.done_at + self.cooldown_s(table) - self._clock()
            if wait <= 0:
                return await asyncio.shield(self._start(scope))
            if wait > MAX_WAIT_S:
                self._refresh_later(scope, wait)
                return table  # type: ignore[return-value]
            await asyncio.sleep(wait)

    def compute_now(self, scope: str) -> ScopeTable:
        """(the caller's thread) For synchronous callers with a cold cache."""
        table = self._compute(scope)
        self._keep(table)
        return table

    def _compute(self, scope: str) -> ScopeTable:
        self.computations += 1
        return compute_table(self.store, scope, self._clock, next(self._versions))

    def _start(self, scope: str) -> asyncio.Future[ScopeTable]:
        future = asyncio.ensure_future(self._run(self._compute, scope))
        self._inflight[scope] = future

        def done(f: asyncio.Future[ScopeTable]) -> None:
            self._inflight.pop(scope, None)
            if f.cancelled():
                return
            exc = f.exception()
            if exc is None:
                self._keep(f.result())
            else:
                log.warning("standings_refresh_failed", scope=scope, error=str(exc))

        future.add_done_callback(done)
        return future

    def _keep(self, table: ScopeTable) -> None:
        old = self._tables.get(table.scope)
        if old is not None and old.version > table.version:
            return  # a later computation finished first
        self._tables[table.scope] = table
        self._tables.move_to_end(table.scope)
        while len(self._tables) > self._max:
            self._tables.popitem(last=False)

    def _refresh_later(self, scope: str, wait: float) -> None:
        if scope in self._timers:
            return

        def kick() -> None:
            self._timers.pop(scope, None)
            if scope not in self._inflight:
                self._start(scope)

        self._timers[scope] = asyncio.get_running_loop().call_later(wait, kick)

    def close(self) -> None:
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
