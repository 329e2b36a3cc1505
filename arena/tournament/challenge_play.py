"""Plays the challenges bots' owners ask for, beside the lobby and the ladder.

Every ``poll_s`` the service reads the open challenges (oldest first) and
starts a match of each whose bots are all free: connected and waiting in
the lobby, or hosted with no run going. A bot plays one challenge match at
a time, and challenge tables stay within the share of the running tables
the limits allow (:func:`arena.tournament.challenge.may_start`), so the
ladder keeps its capacity; on a store several nodes share, the share
counts every node's tables (:func:`tables_elsewhere`). A match whose bot is taken meanwhile (the claim
times out) is simply tried again later; one that is aborted counts an
attempt, and a match aborted ``max_attempts`` times is given up. A
challenge ends (``finished``) once every match is played or given up.

Matches are stored under the challenge's id, in the slot of their match:
after a restart the unplayed slots are played, the played ones never again.

Several nodes on one store each run this service and see every open
challenge; a bot connected to two of them could be seated by both. So a
node first leases the slot (``SlotQueue.lease_slot``, renewed while the
match runs, given back when it did not finish): a slot leased by one node
is left alone by the others, and a node that dies loses its lease after
``LEASE_S``.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Iterable
from typing import Any, Protocol

import structlog

from arena.server.matches import PlayerSpec
from arena.storage.base import (MatchStatus, ScheduledMatch, StorageError, Store,
                                TournamentRecord, TournamentStatus)
from arena.storage.queue import SlotQueue
from arena.tournament.challenge import (
    ChallengeLimits,
    is_challenge,
    is_done,
    may_start,
    next_slots,
)
from arena.tournament.plan import house_strategy

log = structlog.get_logger("arena.challenges")

OPEN = (TournamentStatus.PENDING, TournamentStatus.RUNNING)
LEASE_S = 30.0  # a dead node's challenge match is played elsewhere after this long


class HostedRuns(Protocol):
    """What the service needs of the hosted bots (arena.hosting.hosted.HostedBots)."""

    runs: dict[str, Any]

    def ready_bots(self) -> list[Any]: ...

    async def start(self, bot: str, *, take_seat: bool = False) -> Any: ...

    async def stop(self, bot: str, match_id: str | None = None) -> None: ...


def tables_elsewhere(store: Store, challenge_ids: list[str], node: str,
                     own: set[str]) -> tuple[int, int]:
    """(the store's thread) Tables the other nodes of the store hold now:
    (challenge tables, other tables). Challenge tables are the challenge
    slots another node holds a live lease on (its match seating or playing);
    the others are the running matches not this node's (``own``) of no open
    challenge. A store no other node shares has none."""
    if not isinstance(store, SlotQueue):
        return 0, 0
    challenges = store.leased_elsewhere(challenge_ids, node)
    ids = set(challenge_ids)
    running = store.list_matches(status=MatchStatus.RUNNING, limit=100_000)
    others = sum(1 for m in running if m.id not in own and m.tournament_id not in ids)
    return challenges, others


def open_challenges(store: Any) -> list[tuple[TournamentRecord, list[ScheduledMatch]]]:
    """(the store's thread) Open challenges, oldest first, with their slots."""
    records = sorted((r for r in store.list_tournaments() if is_challenge(r) and r.status in OPEN),
                     key=lambda r: r.created_at)
    return [(r, store.get_schedule(r.id)) for r in records]


class ChallengeService:
    """A :class:`~arena.server.matches.Service` of the arena server."""

    def __init__(self, limits: ChallengeLimits = ChallengeLimits(), *, poll_s: float = 0.5,
                 hosted: HostedRuns | None = None) -> None:
        self.limits = limits
        self.poll_s = poll_s
        self.hosted = hosted  # set by the arena once its hosted bots run
        self.ladder_playing: set[str] = set()  # the hosted ladder's seated bots, when it runs
        self.server: Any = None
        self._playing: dict[tuple[str, int], set[str]] = {}  # (challenge, slot) -> its bots
        self._tasks: set[asyncio.Task[Any]] = set()
        self._loop: asyncio.Task[None] | None = None
        self.played: list[str] = []  # match ids, newest last
        self._own_name = f"challenges-{secrets.token_hex(4)}"

    @property
    def node(self) -> str:
        """Who holds this service's leases: the node's name, or one of this
        process's own for an unnamed arena (two may share a store too)."""
        return getattr(self.server.store, "node", None) or self._own_name

    async def start(self, server: Any) -> None:
        self.server = server
        self._loop = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        tasks = [t for t in (self._loop, *self._tasks) if t is not None]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=5)
        self._loop = None

    async def _run(self) -> None:
        while not self.server.stopping:
            try:
                await self.tick()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a failing store: try again next time
                log.warning("challenges_not_read", error=f"{type(exc).__name__}: {exc}")
            await asyncio.sleep(self.poll_s)

    def _busy(self) -> set[str]:
        return {name for names in self._playing.values() for name in names}

    async def tick(self) -> None:
        """Start what may start now; end challenges that are done."""
        server = self.server
        challenges = await server.writer.read(open_challenges, server.store)
        hosted_ready = set()
        if self.hosted is not None:
            ready = await asyncio.to_thread(self.hosted.ready_bots)
            hosted_ready = {v.bot for v in ready} - set(self.hosted.runs) - self.ladder_playing
        # The share is the store's, not this node's: the other nodes' tables
        # count too (read once a tick, and only when a slot may start: it
        # reads every running match, which a busy server without challenges
        # paid twice a second for nothing; two nodes deciding in the same
        # instant may each start one table past it, never more).
        away: tuple[int, int] | None = None
        for record, schedule in challenges:
            mine = {slot for (cid, slot) in self._playing if cid == record.id}
            if is_done(schedule, self.limits):
                if not mine:
                    await server.writer.set_tournament_status(record.id, TournamentStatus.FINISHED)
                    log.info("challenge_finished", challenge=record.id)
                continue
            for slot in next_slots(schedule, mine, self.limits):
                if away is None:
                    away = await server.writer.read(
                        tables_elsewhere, server.store, [r.id for r, _ in challenges], self.node,
                        server.playing_match_ids())
                away_challenges, away_others = away
                if not may_start(len(self._playing) + away_challenges,
                                 len(server.playing_match_ids()) - len(self._playing)
                                 + away_others, self.limits):
                    return
                names = [n for n in slot.players if house_strategy(n) is None]
                free = (set(server.idle_bots()) | hosted_ready) - self._busy()
                if not set(names) <= free:
                    break  # its bots are playing elsewhere: the next tick tries again
                if not await self._lease(record.id, slot.slot):
                    continue  # another node plays it
                self._launch(record, slot, names, hosted_ready & set(names))

    async def _lease(self, cid: str, slot: int) -> bool:
        store = self.server.store
        if not isinstance(store, SlotQueue):
            return True  # a store no other node shares
        return bool(await self.server.writer.call(store.lease_slot, cid, slot, self.node,
                                                  LEASE_S))

    async def _keep_lease(self, cid: str, slot: int) -> None:
        """Renew the slot's lease while its match runs."""
        store = self.server.store
        if not isinstance(store, SlotQueue):
            return
        while True:
            await asyncio.sleep(LEASE_S / 3)
            try:
                await self.server.writer.call(store.renew_lease, cid, slot, self.node, LEASE_S)
            except StorageError as exc:  # the finish decides; two misses still hold it
                log.warning("challenge_lease_not_renewed", challenge=cid, slot=slot,
                            error=str(exc))

    async def _give_back(self, cid: str, slot: int) -> None:
        """The match did not finish: any node may play the slot at once."""
        store = self.server.store
        if not isinstance(store, SlotQueue):
            return
        try:
            await self.server.writer.call(store.release_slot, cid, slot, self.node)
        except Exception as exc:  # a failing or closing store: the lease runs out by itself
            log.warning("challenge_slot_not_released", challenge=cid, slot=slot, error=str(exc))

    def _launch(self, record: TournamentRecord, slot: ScheduledMatch, names: list[str],
                hosted: set[str]) -> None:
        key = (record.id, slot.slot)
        self._playing[key] = set(names)
        task = asyncio.get_running_loop().create_task(self._play(record, slot, hosted))
        self._tasks.add(task)

        def done(t: asyncio.Task[Any]) -> None:
            self._tasks.discard(t)
            self._playing.pop(key, None)

        task.add_done_callback(done)

    async def _play(self, record: TournamentRecord, slot: ScheduledMatch,
                    hosted: Iterable[str]) -> None:
        server, cid = self.server, record.id
        players = [PlayerSpec(n, house=house_strategy(n)) for n in slot.players]
        if record.status is TournamentStatus.PENDING:
            await server.writer.set_tournament_status(cid, TournamentStatus.RUNNING)
        started: list[str] = []
        match_id: str | None = None
        finished = False
        renewer = asyncio.get_running_loop().create_task(self._keep_lease(cid, slot.slot))
        try:
            for name in hosted:
                assert self.hosted is not None
                self.ladder_playing.add(name)  # the hosted ladder leaves it alone meanwhile
                started.append(name)
                # Its seat of the store, as a ladder table's: no node's ladder
                # starts the bot while this match plays (SeatTakenError if
                # one plays it now: the match waits for a later tick).
                await self.hosted.start(name, take_seat=True)
            outcome = await server.play_match(players, tournament_id=cid, slot=(cid, slot.slot),
                                              game=record.game,
                                              claim_timeout_s=self.limits.claim_timeout_s)
            match_id = outcome.match_id
            if outcome.aborted is not None:
                await server.writer.note_attempt(cid, slot.slot)
                log.warning("challenge_match_aborted", challenge=cid, slot=slot.slot,
                            reason=outcome.aborted)
            else:
                finished = True
                self.played.append(match_id)
                log.info("challenge_match", challenge=cid, slot=slot.slot, match=match_id)
        except TimeoutError as exc:  # a bot was taken meanwhile: not the match's fault
            log.info("challenge_match_deferred", challenge=cid, slot=slot.slot, reason=str(exc))
        except Exception as exc:  # a hosted bot that cannot start, a store that fails
            log.warning("challenge_match_not_played", challenge=cid, slot=slot.slot,
                        error=f"{type(exc).__name__}: {exc}")
        finally:
            renewer.cancel()
            await asyncio.gather(renewer, return_exceptions=True)
            if not finished:
                await self._give_back(cid, slot.slot)
            if self.hosted is not None:
                for name in started:
                    await self.hosted.stop(name, match_id)
                    self.ladder_playing.discard(name)
