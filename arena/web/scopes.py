"""Standings per scope, computed off the event loop and not too often.

A scope is ``ladder`` (matches outside tournaments), ``all``, or a
tournament id. Its :class:`ScopeTable` holds the finished matches of every
game, and per game a :class:`GameTable`: the standings rows and, from the
same pass, every bot's rating history and matches, so a bot page is a few
lookups. Standings never mix games: a ladder is per game, and what the web
serves is addressed by scope and game.

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
from arena.games import UnknownGameError
from arena.tournament.challenge import is_challenge_id
from arena.tournament.ranking import RankingSpecError, ranking_for
from arena.tournament.standings import (
    _rate,
    bootstrap_interval,
    compute_standings,
    counted,
    games_of,
    seat_figures,
)
from arena.web.entrants import as_entrants
from arena.live import LADDER
from arena.people import PEOPLE

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
# bot -> (its primary figure in each of its matches, interval)
Intervals = dict[str, tuple[tuple[int | float, ...], tuple[float, float]]]
MAX_WAIT_S = 0.25  # a request waits this long for a fresh table, else gets the last one
MAX_SCOPES = 32


@dataclass(frozen=True)
class GameTable:
    """One game's standings within a scope."""

    game: str
    matches: list[MatchRecord]  # of this game, oldest first
    rows: list[Wire]
    by_bot: dict[str, Wire]
    histories: dict[str, list[Wire]]  # bot -> rating after each of its matches
    own: dict[str, list[int]]  # bot -> indices into ``matches``
    intervals: Intervals = field(default_factory=dict)
    ratings: dict[str, Any] = field(default_factory=dict)  # after the last of ``matches``


def empty_game_table(game: str) -> GameTable:
    return GameTable(game=game, matches=[], rows=[], by_bot={}, histories={}, own={})


@dataclass(frozen=True)
class ScopeTable:
    scope: str
    key: int  # finished matches in the scope when computed
    matches: list[MatchRecord]  # every game's, oldest first
    games: dict[str, GameTable]  # by game name, for each game with a finished match
    took_s: float
    done_at: float  # clock() when computed
    version: int = field(default=0)  # unique per computation, for caches built on it

    def game(self, name: str) -> GameTable:
        """The table of game ``name`` (empty when it has no match here)."""
        return self.games.get(name) or empty_game_table(name)


def scope_key(store: Store, scope: str) -> int:
    """(any thread) Changes whenever a match of the scope finishes; raises
    NotFoundError for an unknown tournament."""
    tournament_id = None if scope in (LADDER, ALL) else scope
    if tournament_id is not None and scope != PEOPLE:  # people's matches: no tournament
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


def counts_in(scope: str, match: MatchRecord) -> bool:
    """Whether ``match`` counts in the ``ladder`` or ``all`` standings:
    challenge matches are unrated and count in neither (only in their own)."""
    if scope == LADDER:
        return match.tournament_id is None
    return not is_challenge_id(match.tournament_id)


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


def standings_rows(matches: list[MatchRecord], previous: Intervals, game: str
                   ) -> tuple[list[Wire], Intervals]:
    """``compute_standings`` rows of ``game``, with each bot's bootstrap
    interval on the game's primary figure (the row's ``points``) taken from
    ``previous`` when its figures did not change. The bootstrap is most of
    the cost (2,000 resamples per bot, whatever its number of matches) and a
    finished match changes the figures of a few bots, not of the thousand."""
    rows = [row.to_dict() for row in compute_standings(matches, bootstrap_samples=0,
                                                       game=game)]
    spec = ranking_for(game)
    primary = spec.primary.key
    each: dict[str, list[int | float]] = collections.defaultdict(list)
    for match in counted(matches):
        if match.game != game:
            continue
        figures = seat_figures(match, spec)[primary]
        for seat, bot in enumerate(match.players):
            each[bot].append(figures[seat])
    # Rows of games whose descriptor names older fields for the interval
    # (Muushig: stars_ci_low/high) carry it there too.
    prefix = spec.per_match_prefix
    intervals: Intervals = {}
    for row in rows:
        bot = row["bot"]
        values = tuple(each[bot])
        known = previous.get(bot)
        if known is not None and known[0] == values:
            interval = known[1]
        else:
            interval = bootstrap_interval(list(values), samples=BOOTSTRAP_SAMPLES,
                                          seed=f"{BOOTSTRAP_SEED}:{bot}")
        intervals[bot] = (values, interval)
        row["points_ci_low"], row["points_ci_high"] = interval
        if prefix is not None:
            row[f"{prefix}_ci_low"], row[f"{prefix}_ci_high"] = interval
    return rows, intervals


def game_table(game: str, matches: list[MatchRecord], previous: GameTable | None,
               added: list[MatchRecord] | None) -> GameTable:
    """One game's table over its ``matches``; with the previous table and the
    matches ``added`` since, ratings continue from the previous ones."""
    rows, intervals = standings_rows(matches, previous.intervals if previous else {}, game)
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
    return GameTable(game=game, matches=matches, rows=rows, by_bot={r["bot"]: r for r in rows},
                     histories=histories, own=dict(own), intervals=intervals,
                     ratings=ratings)


def compute_table(store: Store, scope: str, clock: Callable[[], float], version: int,
                  previous: ScopeTable | None = None) -> ScopeTable:
    """(a worker thread) Read and compute one scope's table, a game table
    per game; with the previous table, only the matches that finished since
    are read."""
    t0 = time.perf_counter()
    key = scope_key(store, scope)
    tournament_id = None if scope in (LADDER, ALL) else scope
    added = None
    if previous is not None and key > previous.key:
        added = new_finished(store, tournament_id, {m.id for m in previous.matches},
                             key - previous.key)
    if added is not None and previous is not None:
        added.sort(key=lambda m: (m.finished_at or 0.0, m.id))
        if scope in (LADDER, ALL):
            added = [m for m in added if counts_in(scope, m)]
        matches = previous.matches + added
    else:
        matches = finished_matches(store, tournament_id)
        if scope in (LADDER, ALL):
            matches = [m for m in matches if counts_in(scope, m)]
    games: dict[str, GameTable] = {}
    for game in games_of(matches):
        try:
            ranking_for(game)
        except (UnknownGameError, RankingSpecError) as err:
            # A match of a game this server does not know (another node's, an
            # older version's): shown in lists, but no ladder can rank it.
            log.warning("standings_game_unranked", scope=scope, game=game, error=str(err))
            continue
        own_matches = [m for m in matches if m.game == game]
        before = previous.games.get(game) if previous is not None else None
        new = None if added is None else [m for m in added if m.game == game]
        if before is not None and new == []:
            games[game] = before  # nothing of this game finished since
        else:
            games[game] = game_table(game, own_matches, before, new)
    took = time.perf_counter() - t0
    return ScopeTable(scope=scope, key=key, matches=matches, games=games, took_s=took,
                      done_at=clock(), version=version)


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
        # Scopes some page was given an older table of: when their fresh
        # table is kept, on_refreshed(scope) tells the pages to fetch again
        # (a page served the old table has no other reason to ask).
        self._owed: set[str] = set()
        self.on_refreshed: Callable[[str], None] | None = None

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
                if table is None:
                    return await asyncio.shield(running)
                # Several views of one scope (a ladder per game) ask at once:
                # the later ones wait a moment for the table the first started.
                try:
                    fresh = await asyncio.wait_for(asyncio.shield(running), MAX_WAIT_S)
                except Exception:  # timed out, or the refresh failed (its callback logs it)
                    self._owed.add(scope)
                    return table
                if fresh.key == key:
                    return fresh
                continue  # it was computed from older data than this request saw
            wait = 0.0 if table is None else max(
                table.done_at + self.cooldown_s(table), self._next_start) - self._clock()
            if wait <= 0:
                return await asyncio.shield(self._start(scope))
            if wait > MAX_WAIT_S:
                self._refresh_later(scope, wait)
                self._owed.add(scope)
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
                if scope in self._owed and self.on_refreshed is not None:
                    self._owed.discard(scope)
                    self.on_refreshed(scope)
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
