"""Standings per scope, computed off the event loop and not too often.

A scope is ``ladder`` (matches outside tournaments), ``all``, or a
tournament id. Its :class:`ScopeTable` holds the finished matches, the
standings rows and, from the same pass, every bot's rating history and
matches, so a bot page is a few lookups.

Computing a table of thousands of matches takes seconds of Python (the
bootstrap intervals above all), and a thread doing it still holds the GIL
against the loop that times the bots. So a table is recomputed only when a
match finished in its scope, and then at most every
``max(refresh_s, COST_FACTOR x its last computation time)``, and no
computation of any scope starts before ``COST_FACTOR`` times the last one's
time has passed (so all together they take at most ~1/COST_FACTOR of one
core): between two computations a visitor gets the table of a moment ago
and a refresh is scheduled. A new table reads only the matches that
finished since the last one, and keeps the bootstrap interval of every bot
whose results did not change. Cheap tables (small stores) are thus always fresh; a request
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
from arena.tournament.standings import _rate, bootstrap_interval, compute_standings, counted
from arena.web.entrants import as_entrants
from arena.live import LADDER

log = structlog.get_logger(__name__)

Wire = dict[str, Any]
Runner = Callable[..., Awaitable[Any]]

ALL = "all"
PAGE = 500  # rows per store read when walking a whole result set
MAX_SCOPE_MATCHES = 200_000  # standings beyond this would need a summary table
COST_FACTOR = 20.0  # computations (all scopes together) take at most ~1/COST_FACTOR of the time
# compute_standings' own defaults: the intervals served are the ones it gives.
BOOTSTRAP_SAMPLES = 2000
BOOTSTRAP_SEED = 0
Intervals = dict[str, tuple[tuple[int, ...], tuple[float, float]]]  # bot -> (stars, interval)
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
    intervals: Intervals = field(default_factory=dict)
    ratings: dict[str, Any] = field(default_factory=dict)  # after the last of ``matches``


def scope_key(store: Store, scope: str) -> int:
    """(any thread) Changes whenever a match of the scope finishes; raises
    NotFoundError for an unknown tournament."""
    tournament_id = None if scope in (LADDER, ALL) else scope
    if tournament_id is not None:
        store.get_tournament(tournament_id)
    return store.count_matches(tournament_id=tournament_id, status=MatchStatus.FINISHED)


def finished_matches(store: Store, tournament_id: str | None) -> list[MatchRecord]:
    """Oldest first, seats named by entrant (one house entrant per strategy)."""
    return [as_entrants(m) for m in store.finished_matches(tournament_id=tournament_id)]


def rating_histories(matches: list[MatchRecord], *, ratings: dict[str, Any] | None = None,
                     histories: dict[str, list[Wire]] | None = None
                     ) -> tuple[dict[str, list[Wire]], dict[str, Any]]:
    """Every bot's ``rating_history`` in one pass (the same updates, in the
    same order, as :func:`arena.tournament.standings.rating_history`),
    continuing from ``ratings``/``histories`` when given; returns the
    histories and the ratings after the last match."""
    model = PlackettLuce()
    ratings = dict(ratings or {})
    out: dict[str, list[Wire]] = {bot: list(h) for bot, h in (histories or {}).items()}
    for match in counted(matches):
        _rate(model, ratings, match)
        for bot in dict.fromkeys(match.players):
            r = ratings[bot]
            out.setdefault(bot, []).append({"match": match.id, "finished_at": match.finished_at,
                                            "mu": r.mu, "sigma": r.sigma})
    return out, ratings


def new_finished(store: Store, tournament_id: str | None, known: set[str], wanted: int,
                 max_rows: int = 4 * PAGE) -> list[MatchRecord] | None:
    """The ``wanted`` finished matches not in ``known``: newest started
    first, they are near the top. None if they are not within ``max_rows``
    (read everything again then)."""
    found: list[MatchRecord] = []
    offset, size = 0, max(16, 2 * wanted)
    while offset < max_rows:
        page = store.list_matches(tournament_id=tournament_id, status=MatchStatus.FINISHED,
                                  limit=size, offset=offset)
        found += [as_entrants(m) for m in page if m.id not in known]
        if len(found) >= wanted:
            return found
        if len(page) < size:
            break
        offset += size
        size = min(2 * size, PAGE)
    return None


def standings_rows(matches: list[MatchRecord], previous: Intervals
                   ) -> tuple[list[Wire], Intervals]:
    """``compute_standings`` rows, with each bot's bootstrap interval taken
    from ``previous`` when its stars did not change. The bootstrap is most of
    the cost (2,000 resamples per bot, whatever its number of matches) and a
    finished match changes the stars of five bots, not of the thousand."""
    rows = [row.to_dict() for row in compute_standings(matches, bootstrap_samples=0)]
    stars_each: dict[str, list[int]] = collections.defaultdict(list)
    for match in counted(matches):
        assert match.result is not None
        stars = match.result.get("stars") or [0] * len(match.players)
        for seat, bot in enumerate(match.players):
            stars_each[bot].append(stars[seat])
    intervals: Intervals = {}
    for row in rows:
        bot = row["bot"]
        values = tuple(stars_each[bot])
        known = previous.get(bot)
        if known is not None and known[0] == values:
            interval = known[1]
        else:
            interval = bootstrap_interval(list(values), samples=BOOTSTRAP_SAMPLES,
                                          seed=f"{BOOTSTRAP_SEED}:{bot}")
        intervals[bot] = (values, interval)
        row["stars_ci_low"], row["stars_ci_high"] = interval
    return rows, intervals


def compute_table(store: Store, scope: str, clock: Callable[[], float], version: int,
                  previous: ScopeTable | None = None) -> ScopeTable:
    """(a worker thread) Read and compute one scope's table; with the
    previous table, only the matches that finished since are read."""
    t0 = time.perf_counter()
    key = scope_key(store, scope)
    tournament_id = None if scope in (LADDER, ALL) else scope
    added = None
    if previous is not None and key > previous.key:
        added = new_finished(store, tournament_id, {m.id for m in previous.matches},
                             key - previous.key)
    if added is not None and previous is not None:
        added.sort(key=lambda m: (m.finished_at or 0.0, m.id))
        if scope == LADDER:
            added = [m for m in added if m.tournament_id is None]
        matches = previous.matches + added
    else:
        matches = finished_matches(store, tournament_id)
        if scope == LADDER:
            matches = [m for m in matches if m.tournament_id is None]
    rows, intervals = standings_rows(matches, previous.intervals if previous else {})
    own: dict[str, list[int]] = collections.defaultdict(list)
    for i, m in enumerate(matches):
        for bot in dict.fromkeys(m.players):
            own[bot].append(i)
    last = max(((m.finished_at or 0.0) for m in previous.matches), default=0.0) \
        if previous is not None else 0.0
    if added is not None and previous is not None and \
            all((m.finished_at or 0.0) > last for m in added):
        # Ratings follow finishing order: the new matches continue the old.
        histories, ratings = rating_histories(added, ratings=previous.ratings,
                                              histories=previous.histories)
    else:
        histories, ratings = rating_histories(matches)
    took = time.perf_counter() - t0
    return ScopeTable(scope=scope, key=key, matches=matches, rows=rows,
                      by_bot={r["bot"]: r for r in rows}, histories=histories,
                      own=dict(own), took_s=took, done_at=clock(), version=version,
                      intervals=intervals, ratings=ratings)


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
        self._next_start = 0.0  # clock(): no refresh of any scope before this
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
            wait = 0.0 if table is None else max(
                table.done_at + self.cooldown_s(table), self._next_start) - self._clock()
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
        return compute_table(self.store, scope, self._clock, next(self._versions),
                             self._tables.get(scope))

    def _start(self, scope: str) -> asyncio.Future[ScopeTable]:
        future = asyncio.ensure_future(self._run(self._compute, scope, charge=False))
        self._inflight[scope] = future

        def done(f: asyncio.Future[ScopeTable]) -> None:
            self._inflight.pop(scope, None)
            if f.cancelled():
                return
            exc = f.exception()
            if exc is None:
                table = f.result()
                self._next_start = max(self._next_start,
                                       table.done_at + COST_FACTOR * table.took_s)
                self._keep(table)
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
