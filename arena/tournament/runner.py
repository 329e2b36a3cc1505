"""Plays a tournament's schedule on an arena server, resumably.

The tournament's state lives in the store: its config and its whole
schedule are written once; each slot gets its match id only after the match
has finished and been stored. After a crash, the slots without a match are
played again from the start (an interrupted match was marked aborted by the
restarted server and never counts), and finished slots are never replayed.

Every entrant speaks the same TCP protocol: local entrants are started as
subprocesses by the arena (restarted if they crash), remote ones must connect
with their registered token.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import re
import time
from pathlib import Path
from typing import Any, Callable

import structlog

from arena.games import get_game
from arena.auth import hash_token
from arena.server.local_bots import LocalBot, LocalBots, check_commands
from arena.server.server import PlayerSpec
from arena.server.table import TimeLimits
from arena.storage.base import (
    AlreadyExistsError,
    MatchStatus,
    NotFoundError,
    ScheduledMatch,
    StorageError,
    Store,
    TournamentRecord,
    TournamentStatus,
)
from arena.tournament.config import TournamentConfig
from arena.tournament.errors import TournamentError
from arena.tournament.extension import is_reserve, reserve_groups, separated, stopping_level
from arena.storage.deal_keys import DealKeyring, KeyringError
from arena.tournament.host import MatchHost
from arena.tournament.log_folder import RunLogFolder
from arena.tournament.hosted_entrant import HostedEntrants, HostedStarter
from arena.tournament.plan import house_strategy, plan_parts, scheduled_matches
from arena.tournament import growth
from arena.tournament.reveals import is_sealed, poll_reveals, reveal_if_over, reveal_played_sets
from protocol.deals import DEAL_SCHEME, key_commitment

log = structlog.get_logger("arena.tournament")


def tournament_id(config: TournamentConfig) -> str:
    """What the tournament is, not where its file lies: the same file on two
    machines, or in two folders, is the same tournament (re-running the same
    command resumes it). Entrants' working folders are left out of the hash."""
    return _id_of(config, with_folders=False)


def legacy_tournament_id(config: TournamentConfig) -> str:
    """The id an older arena gave the same file (its entrants' folders hashed
    in), so a tournament it started is still found and resumed."""
    return _id_of(config, with_folders=True)


def _id_of(config: TournamentConfig, *, with_folders: bool) -> str:
    wire = config.to_wire()
    if not with_folders:
        for entrant in wire["entrants"]:
            entrant.pop("cwd", None)
    digest = hashlib.sha256(json.dumps(wire, sort_keys=True).encode()).hexdigest()
    slug = re.sub(r"[^a-z0-9]+", "-", config.name.lower()).strip("-")[:40] or "tournament"
    return f"{slug}-{digest[:8]}"


def build_schedule(config: TournamentConfig, tid: str) -> list[ScheduledMatch]:
    """The whole schedule of a tournament, house bots filling empty seats
    (of a Swiss tournament or a gauntlet: its first round or deck set; the
    later ones are added as it is played, arena/tournament/growth.py)."""
    if growth.grows(config):
        return growth.first_slots(config, tid)
    spec = get_game(config.game)
    # Rule options may change the table size (Muushig's `players`).
    n_seats = spec.new_match(dict(config.rules), None, None).n_seats if config.rules else spec.n_seats
    base, reserve = plan_parts(config, seats=n_seats, default_house_bot=spec.default_house_bot)
    return scheduled_matches(tid, base + reserve, reserve_from=len(base) if reserve else None)


def create_or_load(store: Store, config: TournamentConfig, *,
                   secret: bytes | None = None) -> tuple[TournamentRecord, bool]:
    """The stored tournament for this config, created with its schedule if new.
    Returns (record, created).

    A new tournament draws its deal key (or takes ``secret``, the key an
    earlier run revealed, for an exact replay), keeps it where every node of
    the store finds it (arena/storage/deal_keys.py) and publishes its
    commitment in the record's ``config.deals``."""
    tid = tournament_id(config)
    for known in dict.fromkeys((tid, legacy_tournament_id(config))):
        try:
            record = store.get_tournament(known)
        except NotFoundError:
            continue
        return join_tournament(store, record, secret), False
    keyring = DealKeyring.for_store(store)
    try:
        key = keyring.create(tid, secret)
    except KeyringError as exc:
        raise TournamentError(f"cannot create tournament {tid} with --secret: {exc}") from None
    wire = config.to_wire()
    wire["source"] = str(config.source) if config.source else None
    wire["deals"] = deals_wire(key)
    record = TournamentRecord(id=tid, name=config.name, game=config.game, config=wire,
                              status=TournamentStatus.PENDING, created_at=time.time())
    try:
        store.create_tournament(record, build_schedule(config, tid))
    except AlreadyExistsError:  # another node created it at the same moment
        return join_tournament(store, store.get_tournament(tid), secret), False
    return record, True


def deals_wire(key: bytes) -> dict[str, str]:
    """The public part of a tournament's deals: the scheme and the key's commitment."""
    return {"scheme": DEAL_SCHEME, "commitment": key_commitment(key)}


def join_tournament(store: Store, record: TournamentRecord,
                    secret: bytes | None) -> TournamentRecord:
    """An existing tournament, resumed or joined by another node. ``secret``,
    if given, must be the tournament's key: it is kept for a node whose
    store has none (a SQLite copy, an older arena's PostgreSQL node) and
    refused if it is another key."""
    keyring = DealKeyring.for_store(store)
    published = (record.config.get("deals") or {}).get("commitment")
    if secret is not None and published is not None and key_commitment(secret) != published:
        raise TournamentError(f"--secret is not the deal key of tournament {record.id}: its "
                              "published commitment is another key's (give the key the "
                              "tournament was started with, or leave --secret out)")
    if secret is not None and keyring.load(record.id) is None:
        keyring.create(record.id, secret)
    key = tournament_key(store, record)
    if secret is not None and secret != key:
        raise TournamentError(f"tournament {record.id} was started with another deal key; "
                              "use a fresh --db to replay it with --secret")
    return record


def tournament_key(store: Store, record: TournamentRecord) -> bytes:
    """The deal key of a stored tournament, checked against its published
    commitment. A tournament stored without one (by an older arena) gets
    its key now, kept and published before its first match."""
    keyring = DealKeyring.for_store(store)
    published = (record.config.get("deals") or {}).get("commitment")
    try:
        if published is None:
            key = keyring.create(record.id)  # the one kept, if a node was first
            record = store.publish_deals(record.id, deals_wire(key))
            published = record.config["deals"]["commitment"]
            log.info("deal_key_committed", tournament=record.id, commitment=published)
        return keyring.load_checked(record.id, published)
    except KeyringError as exc:
        raise TournamentError(f"cannot deal tournament {record.id}: {exc} (a node joining a "
                              "tournament started elsewhere needs its key: --secret HEX)") from None


class TournamentRunner:
    """Plays one tournament's schedule on a :class:`MatchHost`, resumably.

    ``run()`` starts the local entrants, plays every slot without a finished
    match (retrying aborted ones), then the reserve deck sets while the
    standings are not separated, and marks the tournament finished once
    the whole schedule is done. Progress goes to ``on_progress`` and the
    host's live hub.
    """

    def __init__(self, server: MatchHost, config: TournamentConfig, record: TournamentRecord,
                 *, on_progress: Callable[[int, int], None] | None = None,
                 claim_timeout_s: float = 120.0, local_claim_timeout_s: float = 20.0,
                 log_dir: Path | None = None, hosted: HostedStarter | None = None) -> None:
        self.server = server
        self.store = server.store
        self.config = config
        self.record = record
        self.on_progress = on_progress
        # How long a slot waits for a bot before its seat goes to autopilot: a
        # local bot starts in well under a second, a remote one may be slow.
        self.claim_timeout_s = claim_timeout_s
        self.local_claim_timeout_s = local_claim_timeout_s
        # Beside a database file, or temporary from run() to its end
        # (arena/tournament/log_folder.py).
        self.logs = RunLogFolder(log_dir, self.store)
        self.local = LocalBots(self.logs.path, node=getattr(self.store, "node", None))
        self.hosted = HostedEntrants(config, hosted, idle_bots=server.idle_bots,
                                     wait_s=local_claim_timeout_s)
        self.failures: dict[int, int] = {}
        self.absent: dict[str, int] = {}  # bot -> matches it was not there for
        self.stopped_separated = False  # the reserve was left because the field separated
        self._missing: set[str] = set()  # not there last time: do not wait again
        self.deal_key = tournament_key(self.store, record)
        # Send this node's bots their deferred reveals every second while it
        # plays (off under the director, whose poll sends them already).
        self.polls_reveals = True

    @property
    def log_dir(self) -> Path | None:
        """The local bots' log folder (a temporary one only once run() began)."""
        return self.logs.path

    async def run(self) -> bool:
        """Play every unfinished slot; True when the whole schedule is done.
        A temporary log folder lasts exactly as long as this call."""
        self.local.log_dir = self.logs.open()
        try:
            return await self._play()
        finally:
            self.logs.close(self.local.crashes())

    async def _play(self) -> bool:
        tid = self.record.id
        schedule = self.store.get_schedule(tid)
        todo = [slot for slot in schedule if slot.match_id is None]
        done = len(schedule) - len(todo)
        total = self.expected_total(schedule)
        check_commands([(e.name, list(e.command), e.cwd) for e in self.config.entrants
                        if e.command is not None])
        self.server.reserve_names(self.config.entrant_names)
        if not await self.server.writer.call(self.store.mark_running, tid):
            log.info("tournament_cancelled_not_played", tournament=tid)
            self.server.release_names(self.config.entrant_names)
            return False
        log.info("tournament_started", tournament=tid, slots=len(schedule), todo=len(todo))
        for entrant in self.config.entrants:
            if entrant.command is not None:
                await self.local.start(LocalBot(name=entrant.name, command=list(entrant.command),
                                                cwd=entrant.cwd), self.server)
        self._report(done, total)
        reveals = asyncio.create_task(poll_reveals(self.server)) if self.polls_reveals else None
        try:
            done = await self._play_all([s for s in todo if not is_reserve(s)], done, total)
            if growth.grows(self.config):
                done = await self._play_rounds(done)
            done = await self._play_reserve(schedule, done)
        finally:
            if reveals is not None:
                reveals.cancel()
                await asyncio.gather(reveals, return_exceptions=True)
            await self.local.stop()
            self.server.release_names(self.config.entrant_names)
        complete = self._complete()
        try:  # lift what a stop between a set's last finish and its lift left unlifted
            await reveal_played_sets(self.server, tid)
        except StorageError as exc:  # the API shows them; a director's poll sends them
            log.warning("reveal_not_sent", tournament=tid, error=str(exc))
        if complete:
            await self.server.writer.set_tournament_status(tid, TournamentStatus.FINISHED)
            self.server.hub.standings_changed(tid)
        log.info("tournament_stopped", tournament=tid, done=done, total=total,
                 crashes=self.local.crashes())
        return complete

    async def _play_reserve(self, schedule: list[ScheduledMatch], done: int) -> int:
        """Reserve deck sets while the standings are not separated
        (arena/tournament/extension.py)."""
        groups = reserve_groups(schedule)
        level = stopping_level(len(groups))
        for group in groups:
            todo = [s for s in group if s.match_id is None]
            if not todo:
                continue
            if separated(standings_rows(self.store, self.record.id), level):
                self.stopped_separated = True
                log.info("tournament_separated", tournament=self.record.id, level=level)
                break
            before = done
            done = await self._play_all(todo, done, len(schedule))
            if done - before < len(todo):
                break  # a slot could not be played: stop here, resume continues
        return done

    async def _play_rounds(self, done: int) -> int:
        """Swiss rounds, gauntlet deck sets: add and play each next one once
        the last is played out (arena/tournament/growth.py); one that could
        not be finished stops here, and a resume plays it before the next."""
        tid = self.record.id
        while await self.server.writer.call(growth.extend_if_due, self.store, self.config, tid):
            schedule = self.store.get_schedule(tid)
            todo = [s for s in schedule if s.match_id is None]
            log.info("schedule_extended", tournament=tid, round=schedule[-1].extra.get("round"),
                     deck_set=schedule[-1].extra.get("set"), slots=len(todo))
            before = done
            done = await self._play_all(todo, done, self.expected_total(schedule))
            if done - before < len(todo):
                break
        return done

    def expected_total(self, schedule: list[ScheduledMatch]) -> int:
        """Matches the tournament will have played in all (a growing
        schedule counts what it may still add)."""
        if not growth.grows(self.config):
            return len(schedule)
        return growth.expected_total(self.store, self.config, schedule)

    def _complete(self) -> bool:
        """Every slot of the schedule played, and the reserve played up to
        the stop (whole deck sets); a growing schedule has also stopped growing."""
        if growth.grows(self.config):
            return growth.complete(self.store, self.config, self.record.id)
        groups_open = False
        for slot in self.store.get_schedule(self.record.id):
            if slot.match_id is not None:
                continue
            if not is_reserve(slot):
                return False
            groups_open = True
        if not groups_open:
            return True
        if not self.stopped_separated:
            return False
        started = [g for g in reserve_groups(self.store.get_schedule(self.record.id))
                   if any(s.match_id for s in g)]
        return all(all(s.match_id for s in g) for g in started)

    async def _play_all(self, todo: list[ScheduledMatch], done: int, total: int) -> int:
        busy: set[str] = set()
        running: set[asyncio.Task[bool]] = set()
        queue = list(todo)
        parallel = max(1, self.config.parallel)
        while queue or running:
            started = False
            for slot in list(queue):
                if len(running) >= parallel:
                    break
                remote = {p for p in slot.players if house_strategy(p) is None}
                if remote & busy:
                    continue
                queue.remove(slot)
                busy |= remote
                task = asyncio.create_task(self._play_slot(slot))
                task.add_done_callback(functools.partial(_free, busy, remote))
                running.add(task)
                started = True
            if not running:
                if not started:
                    break
                continue
            finished, running = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
            for task in finished:
                slot_done = task.result()
                if slot_done:
                    done += 1
                self._report(done, total)
        return done

    async def _play_slot(self, slot: ScheduledMatch) -> bool:
        tid = self.record.id
        await self.server.writer.note_attempt(tid, slot.slot)
        await self._await_local_bots(slot.players)
        limits = TimeLimits(self.config.limits.decision_ms, self.config.limits.bank_ms,
                        self.server.config.timeouts_before_autopilot)
        sealed = is_sealed(self.store.get_schedule(tid), slot)
        for attempt in range(3):
            hosted = await self.hosted.seat(slot.players)  # a run per match
            players = [self._player(name) for name in slot.players]
            # The table completes the slot in the match's finishing transaction:
            # a crash can leave the slot open or done, never a match counted
            # without its slot (which a resume would play again).
            outcome = None
            try:
                outcome = await self.server.play_match(
                    players, seed=slot.seed, rules=dict(self.config.rules) or None,
                    tournament_id=tid, claim_timeout_s=self.claim_timeout_s, limits=limits,
                    deal_key=self.deal_key, slot=(tid, slot.slot), game=self.config.game,
                    sealed=sealed)
            finally:
                await self.hosted.leave(hosted, outcome.match_id if outcome else None)
            self._note_presence(slot.players, outcome.absent)
            if outcome.result is not None:
                if sealed:
                    await reveal_if_over(self.server, tid, slot)
                return True
            log.warning("slot_aborted", slot=slot.slot, attempt=attempt, reason=outcome.aborted)
            if self.server.stopping:
                return False
        return False

    async def _await_local_bots(self, names: list[str]) -> None:
        """Wait until each local bot of the slot is in the lobby, or fails
        (exits again and again), or its claim timeout has passed; bots that
        fail are then played by autopilot without waiting the whole timeout."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.local_claim_timeout_s
        waiting = [self.local.bots[n] for n in names
                   if n in self.local.bots and n not in self._missing]
        while waiting and loop.time() < deadline:
            idle = set(self.server.idle_bots())
            waiting = [b for b in waiting if b.name not in idle and not b.failing]
            if waiting:
                await asyncio.sleep(0.05)

    def _player(self, name: str) -> PlayerSpec:
        house = house_strategy(name)
        if house is not None:
            return PlayerSpec(name=name, house=house)
        bot = self.local.bots.get(name)
        if name in self.hosted.entrants:  # its run is in the lobby, or it did not start
            hosted = self.hosted.token_hash(name)
            return PlayerSpec(name=name, stand_in=True, claim_timeout_s=1.0 if hosted else 0.0,
                              token_hash=hosted)
        if name in self._missing or (bot is not None and bot.failing):
            timeout = 0.0  # take it if it is there now, do not wait again
        else:
            # A local bot has had its wait in _await_local_bots.
            timeout = 1.0 if bot is not None else self.claim_timeout_s
        token_hash = hash_token(bot.token) if bot is not None and bot.token else None
        return PlayerSpec(name=name, stand_in=True, claim_timeout_s=timeout,
                          token_hash=token_hash)

    def _note_presence(self, players: list[str], absent: list[str]) -> None:
        for name in players:
            if name in absent:
                self.absent[name] = self.absent.get(name, 0) + 1
                self._missing.add(name)
                log.warning("entrant_played_by_autopilot", bot=name, matches=self.absent[name])
            elif house_strategy(name) is None:
                self._missing.discard(name)
                if name in self.local.bots:
                    self.local.bots[name].exits_in_a_row = 0

    def faults_summary(self) -> list[str]:
        """One line per entrant that could not always play, for the organiser."""
        lines = []
        crashes = self.local.crashes()
        for name in self.config.entrant_names:
            absent, crashed = self.absent.get(name, 0), crashes.get(name, 0)
            if not absent and not crashed:
                continue
            bot = self.local.bots.get(name)
            lines.append(fault_line(name, absent, crashed, bot.last_exit_code if bot else None,
                                    bot.stderr_tail if bot and crashed else [], local=bot is not None))
        return lines

    def _report(self, done: int, total: int) -> None:
        self.server.hub.tournament_progress(self.record.id, done, total)
        if self.on_progress is not None:
            self.on_progress(done, total)


def _free(busy: set[str], names: set[str], _task: asyncio.Task[Any]) -> None:
    """A slot's task is done: its remote entrants may play another slot."""
    busy.difference_update(names)


FAULT_TAIL_LINES = 4  # of a crashed entrant's output, under its fault line


def fault_line(name: str, absent: int, crashed: int, exit_code: int | None, tail: list[str], *,
               local: bool) -> str:
    """What the organiser reads about an entrant that could not always play:
    how often, and for a bot that exited, the last lines it wrote (the
    "can't open file" or the import error that says why)."""
    parts = []
    if absent:
        parts.append(f"{absent} match(es) played by autopilot (not connected)")
    if crashed:
        parts.append(f"exited {crashed} time(s), last exit code {exit_code}")
    text = f"{name}: " + ", ".join(parts) + (f"; output: arena logs {name}" if local else "")
    shown = [line for line in tail if line.strip()][-FAULT_TAIL_LINES:]
    if shown:
        text += "; its last output:\n" + "\n".join(f"  | {line}" for line in shown)
    return text


def standings_rows(store: Store, tid: str) -> list[Any]:
    from arena.tournament.standings import compute_standings

    matches = [store.get_match(m.id) for m in
               store.list_matches(tournament_id=tid, status=MatchStatus.FINISHED, limit=100_000)]
    return compute_standings(matches)
