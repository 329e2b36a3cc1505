"""Every store read the web does, and the wire form of what it reads.

Handlers call only this module. The ``async`` methods run every store read
on the :class:`~arena.web.limits.ReadPool`'s threads, never on the event loop
that times the bots; the synchronous ones are for callers that cannot await
and answer from the caches first (see :mod:`arena.web.scopes`). The hub is
read on the loop only. Rules about what visitors may see live here and
nowhere else:

* The stored log of a RUNNING match holds every hand and is never served;
  a running match is shown from the hub's public log only.
* A finished match of a duplicate tournament shares its decks with the other
  rotations of its table. While one of those is still unplayed its log and
  reveal are withheld ("embargoed"), or a bot could read its next deals,
  until the tournament is finished (a cancelled one can be resumed).
* Abort reasons and tournament configs are served in a public form; the
  stored text (exception messages, commands, paths) only to the admin.
"""

from __future__ import annotations

import collections
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict
from typing import Any, TypeVar

from arena.storage.base import (BotRecord, MatchRecord, MatchStatus, NotFoundError,
                                ScheduledMatch, Store, StoredEvent, TournamentRecord,
                                TournamentStatus)
from arena.web import entrants, series
from arena.web.limits import ReadPool
from arena.live import LADDER, LiveHub, public_abort_reason
from arena.web.live_events import LiveEvents
from arena.web.bot_figures import bot_line, fault_fields, fault_totals, latency_summary, seat_lines
from arena.web.scopes import ALL, GameTable, ScopeCache, ScopeTable, is_challenge_id
from arena.web.tournament_state import tournament_state

__all__ = ["ALL", "Queries", "bot_wire", "match_wire", "public_config"]  # ALL: for the pages

Wire = dict[str, Any]
T = TypeVar("T")

MAX_LATENCY_MATCHES = 100  # a bot's latency figures cover its latest matches
CACHED_DETAILS = 32  # finished match details kept (they never change)
CACHED_BOT_STATS = 256
# What a visitor may see of a tournament config (commands, working
# directories, the source file and the seed stay with the organiser).
PUBLIC_CONFIG_KEYS = ("name", "game", "duplicate", "parallel", "limits", "rules")
PUBLIC_SCHEDULE_KEYS = ("kind", "tables", "max_tables", "house_bot", "rounds", "challenger",
                        "max_sets", "alpha", "effect")
CACHE_SCOPES = 32  # chart series kept
GAME_SCAN_PAGE = 500  # rows per store read when listing one game's matches
FIRST_SEEN = "\0first-seen"  # cache key beside the scopes' (no scope has this name)


# -- wire forms -------------------------------------------------------------
def bot_wire(bot: BotRecord) -> Wire:
    # Never the token hash: it is not secret-grade, but nobody needs it.
    return {"name": bot.name, "kind": bot.kind, "owner": bot.owner,
            "created_at": bot.created_at, "removed": bot.removed}


def match_wire(m: MatchRecord, *, internal: bool = False) -> Wire:
    """A match without its log; ``seed`` is never served (it fixes the decks).
    ``internal`` (the admin): the stored abort reason, not its public form."""
    return {
        "id": m.id, "game": m.game, "players": list(m.players), "status": m.status.value,
        "tournament_id": m.tournament_id, "started_at": m.started_at,
        "finished_at": m.finished_at, "rules": m.rules, "limits": m.limits,
        "result": m.result, "node": m.node,  # node: the one that played it (None: unnamed)
        "abort_reason": m.abort_reason if internal else public_abort_reason(m.abort_reason),
        "faults": None if m.faults is None else [asdict(f) for f in m.faults],
    }


def public_config(config: Wire) -> Wire:
    """The tournament config a visitor sees: names, game, rules, limits and
    the schedule's shape."""
    out = {k: config[k] for k in PUBLIC_CONFIG_KEYS if k in config}
    schedule = config.get("schedule")
    if isinstance(schedule, dict):
        out["schedule"] = {k: schedule[k] for k in PUBLIC_SCHEDULE_KEYS if k in schedule}
    entrants = config.get("entrants")
    if isinstance(entrants, list):
        out["entrants"] = [{"name": e.get("name")} for e in entrants if isinstance(e, dict)]
    deals = config.get("deals")
    if isinstance(deals, dict):  # the commitment to the deal key is public by design
        out["deals"] = {k: deals[k] for k in ("scheme", "commitment") if k in deals}
    return out


def event_wire(e: StoredEvent) -> Wire:
    return {"seq": e.seq, "at": e.at, "data": e.data}


def progress(schedule: list[ScheduledMatch], config: Wire | None = None,
             finished: bool = False) -> Wire:
    from arena.tournament.growth import schedule_progress

    return dict(schedule_progress(schedule, config, finished=finished))


class Queries:
    """Read side of the web app over one :class:`Store` and one hub."""

    def __init__(self, store: Store, hub: LiveHub, *, reads: ReadPool | None = None,
                 standings_refresh_s: float = 0.0,
                 clock: Callable[[], float] = time.monotonic,
                 catch_up: Callable[[], Awaitable[None]] | None = None) -> None:
        self.store = store
        self.hub = hub
        self._series: dict[str, tuple[list[MatchRecord], Wire]] = {}
        self.reads = reads or ReadPool(4, 64)
        self.scopes = ScopeCache(store, self.reads.run, refresh_s=standings_refresh_s,
                                 clock=clock)
        self.scopes.on_refreshed = hub.standings_changed
        self._details: collections.OrderedDict[str, Wire] = collections.OrderedDict()
        self.live_events = LiveEvents(store, hub, self.run, catch_up=catch_up)
        self._bot_stats: collections.OrderedDict[tuple[Any, ...], Wire] = \
            collections.OrderedDict()

    async def run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Any of the synchronous methods below (or a store call), on a read
        thread; raises :class:`~arena.web.limits.BusyError` when too many wait."""
        return await self.reads.run(fn, *args, **kwargs)

    def close(self) -> None:
        self.scopes.close()
        self.reads.close()

    # -- bots ---------------------------------------------------------------
    def get_bot(self, name: str) -> BotRecord:
        bot = self.store.get_bot(name)
        if bot is None:
            raise NotFoundError(f"no bot named {name!r}")
        return bot

    def list_bots(self, limit: int, offset: int,
                  game: str | None = None) -> tuple[list[Wire], int]:
        """Every bot, or (``game``) those with a finished match of that game."""
        bots = sorted(self.all_bots(), key=lambda b: b.name.lower())
        if game is not None:
            played = self._table_now(ALL).game(game).own
            bots = [b for b in bots if b.name in played]
        return [bot_wire(b) for b in bots[offset:offset + limit]], len(bots)

    # -- matches --------------------------------------------------------------
    def list_matches(self, *, bot: str | None, tournament_id: str | None,
                     status: MatchStatus | None, limit: int,
                     offset: int, game: str | None = None) -> tuple[list[Wire], int]:
        if bot is not None and entrants.is_house_entrant(bot):
            return self._house_matches(bot, tournament_id, status, limit, offset, game)
        if game is not None:
            return self._game_matches(bot, tournament_id, status, limit, offset, game)
        records = self.store.list_matches(bot=bot, tournament_id=tournament_id,
                                          status=status, limit=limit, offset=offset)
        total = self.store.count_matches(bot=bot, tournament_id=tournament_id, status=status)
        return [match_wire(m) for m in records], total

    def _game_matches(self, bot: str | None, tournament_id: str | None,
                      status: MatchStatus | None, limit: int, offset: int,
                      game: str) -> tuple[list[Wire], int]:
        # The store does not filter by game. Finished matches (nearly all of
        # them) come from the standings' tables, which hold them by game;
        # the few running and aborted ones from walking the store.
        found: list[tuple[float, str, str]] = []  # (started_at, id, game) newest first
        if status in (None, MatchStatus.FINISHED):
            scope = ALL if tournament_id is None else tournament_id
            for m in self.scope_matches(scope, game):
                if bot is None or bot in m.players:
                    found.append((m.started_at, m.id, m.game))
        for other in (MatchStatus.RUNNING, MatchStatus.ABORTED):
            if status not in (None, other):
                continue
            at = 0
            while True:
                page = self.store.list_matches(bot=bot, tournament_id=tournament_id,
                                               status=other, limit=GAME_SCAN_PAGE, offset=at)
                found += [(m.started_at, m.id, m.game) for m in page if m.game == game]
                if len(page) < GAME_SCAN_PAGE:
                    break
                at += GAME_SCAN_PAGE
        found.sort(key=lambda f: (f[0], f[1]), reverse=True)
        shown = [self.get_match(mid) for _, mid, _ in found[offset:offset + limit]]
        return [match_wire(m) for m in shown if m is not None], len(found)

    def get_match(self, match_id: str) -> MatchRecord | None:
        try:
            return self.store.get_match(match_id)
        except NotFoundError:
            return None

    def match_detail(self, match_id: str, *, internal: bool = False) -> Wire:
        """The match, its result, reveal and event log, as far as it may be shown."""
        cached = None if internal else self._details.get(match_id)
        if cached is not None:
            return cached
        record = self.get_match(match_id)
        if record is None or record.status is MatchStatus.RUNNING:
            return self._live_detail(match_id, record, internal=internal)
        return self._stored_detail(record, internal=internal)

    async def match_detail_async(self, match_id: str, *, internal: bool = False) -> Wire:
        cached = None if internal else self._details.get(match_id)
        if cached is not None:
            return cached
        record = await self.run(self.get_match, match_id)
        if record is None or record.status is MatchStatus.RUNNING:
            detail = self._live_detail(match_id, record, internal=internal)  # the hub: loop only
            if detail["truncated"] and record is not None:
                events = await self.live_events.all_of(record)
                if events is not None:
                    detail = {**detail, "events": events, "truncated": False}
            return detail
        return await self.run(self._stored_detail, record, internal=internal)

    def _stored_detail(self, record: MatchRecord, *, internal: bool = False) -> Wire:
        embargoed = self._embargoed(record)
        wire = match_wire(record, internal=internal)
        wire["reveal"] = None if embargoed else record.reveal
        wire["latency"] = [latency_summary(seat) for seat in record.latency_ms or []]
        events = [] if embargoed else [event_wire(e) for e in self.store.get_events(record.id)]
        detail = {"match": wire, "live": False, "embargoed": embargoed, "events": events}
        if not embargoed and not internal:  # over and shown in full: it never changes
            self._details[record.id] = detail
            while len(self._details) > CACHED_DETAILS:
                self._details.popitem(last=False)
        return detail

    def _live_detail(self, match_id: str, record: MatchRecord | None, *,
                     internal: bool = False) -> Wire:
        info = self.hub.live_info(match_id)
        if record is None and info is None:
            raise NotFoundError(f"no match with id {match_id!r}")
        if record is not None:
            wire = match_wire(record, internal=internal)
        else:  # the store has not caught up with the hub yet
            assert info is not None
            wire = {"id": match_id, "game": info.get("game"), "players": info.get("players", []),
                    "status": MatchStatus.RUNNING.value,
                    "tournament_id": info.get("tournament_id"),
                    "started_at": info.get("started_at"), "finished_at": None,
                    "rules": info.get("rules"), "limits": info.get("limits"), "result": None,
                    "abort_reason": None, "faults": None}
        wire["reveal"] = None
        wire["latency"] = []
        return {"match": wire, "live": True, "embargoed": False,
                "events": self.hub.public_log(match_id) or [],
                "truncated": bool(info and info.get("truncated"))}

    def _embargoed(self, record: MatchRecord) -> bool:
        if record.tournament_id is None:
            return False
        try:
            tournament = self.store.get_tournament(record.tournament_id)
        except NotFoundError:
            return False
        if tournament.status is TournamentStatus.FINISHED:
            return False  # nothing deals its decks any more; a cancelled one may resume
        if record.seed is None:
            return True  # cannot tell which slots share its decks: be safe
        return any(s.seed == record.seed and s.match_id is None
                   for s in self.store.get_schedule(record.tournament_id))

    # -- tournaments -------------------------------------------------------------
    def tournament_wire(self, t: TournamentRecord, *, config: bool = False,
                        internal: bool = False) -> Wire:
        wire = {"id": t.id, "name": t.name, "game": t.game, "status": t.status.value,
                "created_at": t.created_at, "finished_at": t.finished_at,
                "progress": progress(self.store.get_schedule(t.id), t.config,
                                     t.status is TournamentStatus.FINISHED)}
        if config:
            wire["config"] = t.config if internal else public_config(t.config)
            wire.update(tournament_state(self.store, t))
        return wire

    def list_tournaments(self, limit: int, offset: int,
                         game: str | None = None) -> tuple[list[Wire], int]:
        records = sorted(self.store.list_tournaments(), key=lambda t: t.created_at,
                         reverse=True)  # challenges have their own list: /api/challenges
        records = [t for t in records if (game is None or t.game == game)
                   and not is_challenge_id(t.id)]
        return [self.tournament_wire(t) for t in records[offset:offset + limit]], len(records)

    def get_tournament(self, tournament_id: str, *, internal: bool = False) -> Wire:
        return self.tournament_wire(self.store.get_tournament(tournament_id), config=True,
                                    internal=internal)

    # -- standings -----------------------------------------------------------------
    def standings(self, scope: str, game: str) -> list[Wire]:
        """Rows of ``game`` for ``ladder`` (matches outside tournaments),
        ``all``, or a tournament id (raises NotFoundError for an unknown
        one). Synchronous: the cached table, computed here only if there is
        none."""
        return self._table_now(scope).game(game).rows

    async def standings_async(self, scope: str, game: str) -> list[Wire]:
        return (await self.scopes.get(scope)).game(game).rows

    def scope_matches(self, scope: str, game: str | None = None) -> list[MatchRecord]:
        """The scope's finished matches, oldest first: of ``game``, or of every game."""
        table = self._table_now(scope)
        return table.matches if game is None else table.game(game).matches

    def scope_games(self, scope: str) -> list[str]:
        """The games with a ranked finished match in the scope, sorted."""
        return sorted(self._table_now(scope).games)

    async def prepare(self, scope: str, bot: str | None = None, recent: int = 20,
                      game: str | None = None) -> None:
        """Bring the caches the synchronous methods read up to date, off the
        loop: a page handler that cannot await calls this first."""
        table = await self.scopes.get(scope)
        if bot is not None:
            for g in [game] if game is not None else sorted(table.games):
                await self.run(self._bot_stats_for, bot, table, g, recent)

    def _table_now(self, scope: str) -> ScopeTable:
        table = self.scopes.peek(scope)
        return table if table is not None else self.scopes.compute_now(scope)

    # -- one bot --------------------------------------------------------------------
    def bot_games(self, name: str, scope: str) -> list[str]:
        """The games ``name`` has a finished match of in the scope, sorted."""
        table = self._table_now(scope)
        return [g for g in sorted(table.games) if name in table.games[g].own]

    def bot_stats(self, name: str, scope: str, recent: int, game: str) -> Wire:
        return self._bot_stats_for(name, self._table_now(scope), game, recent)

    async def bot_stats_async(self, name: str, scope: str, recent: int, game: str) -> Wire:
        table = await self.scopes.get(scope)
        return await self.run(self._bot_stats_for, name, table, game, recent)

    def _bot_stats_for(self, name: str, scope_table: ScopeTable, game: str,
                       recent: int) -> Wire:
        key = (name, scope_table.scope, game, scope_table.version, recent)
        cached = self._bot_stats.get(key)
        if cached is not None:
            return cached
        bot = self.entrant_bot(name)
        table: GameTable = scope_table.game(game)
        own = [table.matches[i] for i in table.own.get(name, ())]
        per_match = [bot_line(m, name) for m in own]
        seats = [line for m in own for line in seat_lines(m, name)]  # once per seat, as the standings
        points = [line["points"] or 0 for line in seats]
        stars = [line["stars"] for line in seats if line["stars"] is not None]
        latencies: list[float] = []
        for m in own[-MAX_LATENCY_MATCHES:]:
            full = self.get_match(m.id)  # scope records may omit latency
            if full is None or not full.latency_ms:
                continue
            for seat, who in enumerate(full.players):
                if entrants.entrant_of(who) == name and seat < len(full.latency_ms):
                    latencies.extend(full.latency_ms[seat])
        stats = {
            "bot": bot_wire(bot), "scope": scope_table.scope, "game": game,
            "standing": table.by_bot.get(name),
            "rating_history": list(table.histories.get(name, ())),
            "matches": len(seats),
            "points_per_match": round(sum(points) / len(points), 4) if points else None,
            "stars_per_match": round(sum(stars) / len(stars), 4) if stars else None,
            "recent": list(reversed(per_match[-recent:])) if recent else [],
            "faults": fault_totals(own, name),
            "latency": latency_summary(latencies),
            "latency_matches": min(len(own), MAX_LATENCY_MATCHES),
        }
        self._bot_stats[key] = stats
        while len(self._bot_stats) > CACHED_BOT_STATS:
            self._bot_stats.popitem(last=False)
        return stats

    def bot_faults(self, name: str, limit: int, offset: int, *,
                   internal: bool = False) -> tuple[list[Wire], int]:
        """Faults of every match of ``name``, newest first, with the fault
        records of its own seats (read only from matches that are over)."""
        self.get_bot(name)
        records = self.store.list_matches(bot=name, limit=limit, offset=offset)
        total = self.store.count_matches(bot=name)
        out = []
        for m in records:
            seats = [i for i, who in enumerate(m.players) if who == name]
            details: list[Wire] = []
            if m.status is not MatchStatus.RUNNING:
                for e in self.store.get_events(m.id):
                    if e.data.get("kind") in ("timeout", "autopilot") \
                            and e.data.get("seat") in seats:
                        details.append({"seq": e.seq, "at": e.at, **fault_fields(e.data)})
            out.append({
                "match": m.id, "status": m.status.value, "tournament_id": m.tournament_id,
                "started_at": m.started_at, "seats": seats,
                "faults": None if m.faults is None
                else [asdict(m.faults[s]) for s in seats if s < len(m.faults)],
                "abort_reason": m.abort_reason if internal
                else public_abort_reason(m.abort_reason), "events": details,
            })
        return out, total

    # -- live ---------------------------------------------------------------------
    def live_matches(self) -> list[Wire]:
        return self.hub.live_matches()

    # -- entrants: every name a match shows has a page ------------------------------
    def registered_bot(self, name: str) -> BotRecord | None:
        """The bots table's row of ``name``, if it has one."""
        return self.store.get_bot(name)

    def entrant_bot(self, name: str) -> BotRecord:
        """The bots table's row, or one derived from the matches ``name``
        played (tournament entrants, open-mode and house bots have no row)."""
        bot = self.store.get_bot(name)
        if bot is not None:
            return bot
        entrant = entrants.entrant_of(name)
        if entrant != name:
            raise NotFoundError(f"{name!r} is a seat of the house entrant {entrant!r}")
        local = entrants.local_entrants(self.store.list_tournaments())
        first = self._first_seen().get(name)
        total = 0 if first is not None or entrants.is_house_entrant(name) \
            else self.store.count_matches(bot=name)
        if total:  # only in running or aborted matches so far
            first = self.store.list_matches(bot=name, limit=1, offset=total - 1)[0].started_at
        if first is None:
            raise NotFoundError(f"no bot named {name!r}")
        return entrants.derived_bot(name, first_seen=first, local=local)

    def all_bots(self) -> list[BotRecord]:
        """Registered bots and every entrant of a finished or live match."""
        bots = {b.name: b for b in self.store.list_bots()}
        local = entrants.local_entrants(self.store.list_tournaments())
        for name, first in self._first_seen().items():
            if name not in bots:
                bots[name] = entrants.derived_bot(name, first_seen=first, local=local)
        return list(bots.values())

    def _first_seen(self) -> dict[str, float]:
        live = [(entrants.entrant_of(p), float(m.get("started_at") or 0.0))
                for m in self.live_matches() for p in m.get("players") or []]
        matches = self.scope_matches(ALL)
        cached = self._series.get(FIRST_SEEN)
        if cached is None or cached[0] is not matches:
            seen: dict[str, float] = {}
            for m in matches:
                for p in m.players:
                    seen[p] = min(seen.get(p, m.started_at), m.started_at)
            cached = (matches, seen)
            self._series[FIRST_SEEN] = cached
        first = dict(cached[1])
        for name, at in live:
            first[name] = min(first.get(name, at), at)
        return first

    def house_seat_names(self, name: str, scope: str) -> list[str]:
        """The numbered seat names a house entrant played under (recent matches)."""
        own = [m for m in self.scope_matches(scope) if name in m.players]
        raw = [r for r in (self.get_match(m.id) for m in own[-MAX_LATENCY_MATCHES:]) if r]
        return entrants.house_seat_names(name, raw)

    def bot_tournaments(self, name: str) -> list[tuple[str, str]]:
        """``(id, name)`` of the tournaments ``name`` has a finished match in."""
        ids: dict[str, None] = {}
        for m in self.scope_matches(ALL):
            if m.tournament_id is not None and name in m.players:
                ids.setdefault(m.tournament_id)
        out = []
        for tid in ids:
            try:
                out.append((tid, self.store.get_tournament(tid).name))
            except NotFoundError:  # kept by another node's store
                out.append((tid, tid))
        return out

    def _house_matches(self, name: str, tournament_id: str | None,
                       status: MatchStatus | None, limit: int,
                       offset: int, game: str | None = None) -> tuple[list[Wire], int]:
        # A house entrant is several seat names: its matches come from the
        # finished matches the standings read (house seats never abort a match).
        if status not in (None, MatchStatus.FINISHED):
            return [], 0
        own = [m for m in reversed(self.scope_matches(ALL, game)) if name in m.players
               and (tournament_id is None or m.tournament_id == tournament_id)]
        shown = [self.get_match(m.id) for m in own[offset:offset + limit]]
        return [match_wire(m) for m in shown if m is not None], len(own)

    def scope_series(self, scope: str, game: str) -> Wire:
        """Per entrant, the game's primary figure per match and rating after
        each of its matches of ``game`` in ``scope`` (for the charts),
        recomputed when the scope changes."""
        matches = self.scope_matches(scope, game)
        key = f"{scope}\0{game}"
        cached = self._series.get(key)
        if cached is None or cached[0] is not matches:
            cached = (matches, series.scope_series(matches, game))
            self._series[key] = cached
            while len(self._series) > CACHE_SCOPES:
                self._series.pop(next(iter(self._series)))
        return cached[1]
