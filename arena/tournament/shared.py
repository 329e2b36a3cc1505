"""Plays a tournament as a queue shared by several arena nodes.

Every node runs the same loop: claim the lowest open slot for a lease
(``claim_slot``), renew the lease while its match plays, finish the match
and fill the slot in one transaction (``finish_match(slot=...)``), give the
slot back if the match was aborted. A node that dies stops renewing; when
its lease has run out another node's claim takes the slot and replays it
from the start, with the same deals (the slot's seed and the shared deal
key). A node that was only slow cannot count a slot twice: its finish is
refused with ``SlotTakenError`` and its match is aborted.

Local entrants (commands) are started by every node, so whichever node
claims a slot seats its own copy of the bot. A remote entrant must be
connected to the node that plays its slot: a node that claims a slot whose
remote entrants are not in its lobby gives the slot back at once (see
docs/scaling.md for the presence design that routes slots to the right
node).

While PostgreSQL is unreachable every store call fails with StorageError:
claims are retried with a growing pause, a renewal that fails is retried at
the next tick (the match keeps playing), and a match whose finish cannot be
stored is aborted by its table; its slot stays open and is played again.
"""

from __future__ import annotations

import asyncio
import functools
import time
from dataclasses import dataclass, replace
from typing import Any

import structlog

from arena.live import SLOT_TAKEN_OVER
from arena.server.lobby import ClaimTimeoutError
from arena.server.matches import PlayerSpec
from arena.server.table import TimeLimits
from arena.storage.base import MatchStatus, StorageError, TournamentStatus
from arena.storage.queue import SlotLease, SlotQueue
from arena.tournament.plan import house_strategy
from arena.tournament.errors import TournamentError
from arena.tournament.reveals import is_sealed, poll_reveals, reveal_if_over, reveal_played_sets
from arena.tournament.runner import TournamentRunner
from arena.tournament import growth

log = structlog.get_logger("arena.tournament.shared")

# The lease a node holds on a slot: a dead node's slots are taken over after
# at most this long (plus a claim poll). Renewed every third of it, so two
# renewals in a row may fail (a slow database) before the lease is lost.
DEFAULT_LEASE_S = 30.0
DEFAULT_POLL_S = 1.0


@dataclass(frozen=True)
class QueueSettings:
    node: str
    lease_s: float = DEFAULT_LEASE_S
    poll_s: float = DEFAULT_POLL_S  # how often an idle node looks for open or expired slots
    max_backoff_s: float = 5.0  # longest pause between claims while the store fails
    # How long a node waits for a slot's remote bot that left it between the
    # claim and its seat (a reconnect to this node) before it gives the slot
    # back for the node the bot went to.
    gone_grace_s: float = 5.0


class SlotLostError(Exception):
    """Another node took this node's slot over (its lease ran out)."""


class SharedTournamentRunner(TournamentRunner):
    """A :class:`TournamentRunner` that takes its slots from the shared queue."""

    def __init__(self, *args: Any, queue: QueueSettings, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.config.schedule.until_separated:
            raise TournamentError("--until-separated decides after each deck set which slots "
                                  "to play: run it on one node (without --node)")
        if self.hosted.entrants:  # their runs start per match on the node that plays it
            raise TournamentError("hosted entrants are played by one node: run this "
                                  "tournament without --node")
        self.queue = queue
        self.node = queue.node
        self.played: list[int] = []  # slots this node finished
        self.takeovers: list[int] = []  # slots this node claimed after another node's lease
        self._busy: set[str] = set()  # bots seated at one of this node's tables
        self._freed = asyncio.Condition()

    @property
    def _slots(self) -> SlotQueue:
        """The store's shared schedule (every SQL store has one)."""
        assert isinstance(self.store, SlotQueue), "a shared tournament needs an SQL store"
        return self.store

    # -- the whole tournament ---------------------------------------------------
    async def _play(self) -> bool:
        tid = self.record.id
        self.server.reserve_names(self.config.entrant_names)
        if not await self._retrying(self.store.mark_running, tid):
            log.info("tournament_cancelled_not_played", tournament=tid, node=self.node)
            return False
        log.info("tournament_joined", tournament=tid, node=self.node,
                 lease_s=self.queue.lease_s)
        for entrant in self.config.entrants:
            if entrant.command is not None:
                from arena.server.local_bots import LocalBot

                await self.local.start(LocalBot(name=entrant.name, command=list(entrant.command),
                                                cwd=entrant.cwd), self.server)
        try:
            await self._report_done()
            workers = [asyncio.create_task(self._worker(i))
                       for i in range(max(1, self.config.parallel))]
            reveals = [asyncio.create_task(poll_reveals(self.server))] if self.polls_reveals else []
            try:
                await asyncio.gather(*workers)
            finally:
                for w in workers + reveals:
                    w.cancel()
                await asyncio.gather(*workers, *reveals, return_exceptions=True)
        finally:
            await self.local.stop()
            self.server.release_names(self.config.entrant_names)
        complete = await self._retrying(self._all_done)
        try:  # the sets played out, on this node or another: its bots are owed them
            await reveal_played_sets(self.server, tid)
        except StorageError as exc:  # the director's next poll sends them
            log.warning("reveal_not_sent", node=self.node, error=str(exc))
        if complete:
            await self._retrying(self._close_tournament)
            self.server.hub.standings_changed(tid)
        log.info("tournament_left", tournament=tid, node=self.node, complete=complete,
                 played=len(self.played), takeovers=len(self.takeovers))
        return complete

    def _all_done(self) -> bool:
        if growth.grows(self.config):
            return growth.complete(self.store, self.config, self.record.id)
        return all(s.match_id is not None for s in self.store.get_schedule(self.record.id))

    def _out_of_slots(self) -> bool:
        """No open slot: True when the tournament is over; a Swiss round or a
        gauntlet deck set that is over gets the next one appended here (by
        whichever node asks first: the store adds it once) and False is
        returned."""
        if self._all_done():
            return True
        if growth.grows(self.config):
            growth.extend_if_due(self.store, self.config, self.record.id)
        return False

    def _close_tournament(self) -> None:
        """Every slot is filled: mark the tournament finished and abort the
        matches other nodes left running (a dead node's, or a slow node's
        whose slot was taken over), so nothing of it stays ``running``."""
        tid = self.record.id
        self.store.set_tournament_status(tid, TournamentStatus.FINISHED)
        for match in self.store.list_matches(tournament_id=tid, status=MatchStatus.RUNNING,
                                             limit=100_000):
            if match.id not in self.server.playing_match_ids():
                self.store.abort_match(match.id, f"slot replayed by another node "
                                                 f"(was on {match.node or 'an unnamed node'})")

    async def _retrying(self, fn: Any, *args: Any) -> Any:
        """Run a store call until it succeeds: a database outage pauses the
        node's bookkeeping, it does not end the tournament."""
        pause = 0.1
        while True:
            try:
                if asyncio.iscoroutinefunction(fn):
                    return await fn(*args)
                return await self.server.writer.call(fn, *args)
            except StorageError as exc:
                if self.server.stopping:
                    raise
                log.warning("store_unavailable", node=self.node, error=str(exc),
                            retry_in_s=pause)
                await asyncio.sleep(pause)
                pause = min(pause * 2, self.queue.max_backoff_s)

    async def _report_done(self) -> None:
        try:
            schedule = await self.server.writer.read(self.store.get_schedule, self.record.id)
        except StorageError:
            return  # progress is cosmetic; the next slot reports again
        self._report(sum(1 for s in schedule if s.match_id is not None),
                     self.expected_total(schedule))

    # -- one worker: claim, play, finish or give back ---------------------------
    async def _worker(self, index: int) -> None:
        tid = self.record.id
        pause = self.queue.poll_s
        while not self.server.stopping:
            try:
                if await self._cancelled():
                    return
                here = self.server.connected_bots()  # read on the loop, not the writer's thread
                lease = await self.server.writer.call(
                    functools.partial(self._slots.claim_slot,
                                      playable=lambda players: self._remote(players) <= here),
                    tid, self.node, self.queue.lease_s)
                if lease is None and await self.server.writer.call(self._out_of_slots):
                    return
            except StorageError as exc:
                log.warning("claim_failed", node=self.node, error=str(exc), retry_in_s=pause)
                await asyncio.sleep(pause)
                pause = min(pause * 2, self.queue.max_backoff_s)
                continue
            pause = self.queue.poll_s
            if lease is None:  # every open slot is leased by a live node
                await asyncio.sleep(self.queue.poll_s)
                continue
            await self._play_leased(lease)
            await self._report_done()

    async def _cancelled(self) -> bool:
        """The organiser cancelled the tournament (on any node): claim no more."""
        record = await self.server.writer.read(self.store.get_tournament, self.record.id)
        if record.status is TournamentStatus.CANCELLED:
            log.info("tournament_cancelled_here", tournament=self.record.id, node=self.node)
            return True
        return False

    def _remote(self, players: list[str]) -> set[str]:
        """A slot's remote entrants: the bots that must be connected to the
        node that plays it (house bots and local entrants are on every node)."""
        return {p for p in players if house_strategy(p) is None and p not in self.local.bots}

    async def _play_leased(self, lease: SlotLease) -> None:
        slot = lease.slot
        if slot.attempts > 1:
            self.takeovers.append(slot.slot)
            log.info("slot_taken_over", node=self.node, slot=slot.slot, attempt=slot.attempts)
        names = {p for p in slot.players if house_strategy(p) is None}
        if not self._remote(slot.players) <= self.server.connected_bots():
            # Its bots left between the claim and now: let a node that has
            # them claim it.
            await self._release(slot.slot)
            await asyncio.sleep(self.queue.poll_s)
            return
        lost = asyncio.Event()
        renewer = asyncio.create_task(self._renew(slot.slot, lost))
        try:
            await self._wait_free(names, lost)
            if lost.is_set():
                raise SlotLostError(slot.slot)
            self._busy |= names
            try:
                done = await self._play_once(slot, lost)
            finally:
                self._busy -= names
                async with self._freed:
                    self._freed.notify_all()
        except SlotLostError:
            log.warning("slot_lost", node=self.node, slot=slot.slot)
            return
        except asyncio.CancelledError:
            # The node is stopping (Ctrl-C, SIGTERM): its match is aborted
            # with the server, so give the slot back now; left leased, a
            # resume or another node would wait out the lease first.
            await self._release(slot.slot)
            raise
        finally:
            renewer.cancel()
            await asyncio.gather(renewer, return_exceptions=True)
        if done:
            self.played.append(slot.slot)
        else:
            await self._release(slot.slot)

    async def _wait_free(self, names: set[str], lost: asyncio.Event) -> None:
        """A bot plays one table at a time on this node: wait until the
        slot's bots are out of this node's other matches (the lease is
        renewed meanwhile)."""
        async with self._freed:
            while names & self._busy and not lost.is_set():
                try:  # not wait_for: on 3.11 it may swallow a cancel that meets the wake-up
                    async with asyncio.timeout(self.queue.poll_s):
                        await self._freed.wait()
                except TimeoutError:
                    pass

    async def _play_once(self, slot: Any, lost: asyncio.Event) -> bool:
        tid = self.record.id
        await self._await_local_bots(slot.players)
        # A match started while the database is away could not be stored:
        # wait for it (the lease is renewed meanwhile, or taken over).
        await self._retrying(self.store.get_tournament, tid)
        if lost.is_set():
            raise SlotLostError(slot.slot)
        players = [self._player(name) for name in slot.players]
        limits = TimeLimits(self.config.limits.decision_ms, self.config.limits.bank_ms,
                        self.server.config.timeouts_before_autopilot)
        sealed = is_sealed(await self._retrying(self.store.get_schedule, tid), slot)
        play = asyncio.create_task(self.server.play_match(
            players, seed=slot.seed, rules=dict(self.config.rules) or None, tournament_id=tid,
            claim_timeout_s=self.claim_timeout_s, limits=limits, deal_key=self.deal_key,
            slot=(tid, slot.slot), sealed=sealed))
        watcher = asyncio.create_task(lost.wait())
        try:
            await asyncio.wait([play, watcher], return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            # The node is stopping: end the match (its table aborts it) and
            # read both tasks' ends, or the loop is left with running tasks
            # whose errors nobody sees.
            play.cancel()
            watcher.cancel()
            await asyncio.gather(play, watcher, return_exceptions=True)
            raise
        watcher.cancel()
        await asyncio.gather(watcher, return_exceptions=True)
        if not play.done():
            # Another node plays this slot now: stop ours (the table aborts it).
            await self._until_cancellable(play, (tid, slot.slot))
            self.server.mark_cancelled(SLOT_TAKEN_OVER, slot=(tid, slot.slot))
            play.cancel()
            await asyncio.gather(play, return_exceptions=True)
            raise SlotLostError(slot.slot)
        try:
            outcome = play.result()
        except ClaimTimeoutError as exc:
            log.info("slot_given_back", node=self.node, slot=slot.slot, reason=str(exc))
            return False
        self._note_presence(slot.players, outcome.absent)
        if outcome.result is not None:
            if sealed:
                try:
                    await reveal_if_over(self.server, tid, slot)
                except StorageError as exc:  # the API reveals it once the store is back
                    log.warning("reveal_not_sent", node=self.node, slot=slot.slot, error=str(exc))
            return True
        # A refused finish (SlotTakenError: another node filled the slot)
        # and a finish the database did not take both end here, unfinished.
        log.warning("slot_aborted", node=self.node, slot=slot.slot, reason=outcome.aborted)
        return False

    def _player(self, name: str) -> PlayerSpec:
        spec = super()._player(name)
        if self._remote([name]):
            # Slots are claimed only while their remote bots are here; one
            # that left since may be playing on another node: wait briefly
            # for a reconnect, then give the slot back rather than wait out
            # the claim timeout and play its seat by autopilot.
            return replace(spec, stand_in=False,
                           claim_timeout_s=min(self.claim_timeout_s, self.queue.gone_grace_s))
        return spec

    async def _until_cancellable(self, play: asyncio.Task[Any], slot: tuple[str, int]) -> None:
        """Wait while the slot's table is still being stored as started: a
        table cancelled then would keep its bots seated (they never come
        back to the lobby). Seats still being claimed are given back by
        play_match itself."""
        while not play.done():
            if self.server.slot_started(slot):
                return
            await asyncio.sleep(0.02)

    async def _renew(self, slot: int, lost: asyncio.Event) -> None:
        every = self.queue.lease_s / 3
        deadline = time.time() + self.queue.lease_s
        while True:
            await asyncio.sleep(every)
            try:
                held = await self.server.writer.call(self._slots.renew_lease, self.record.id,
                                                     slot, self.node, self.queue.lease_s)
            except StorageError as exc:
                # Keep playing: the finish decides. Past the lease another
                # node may claim the slot, and then one finish is refused.
                log.warning("lease_not_renewed", node=self.node, slot=slot, error=str(exc),
                            lease_left_s=round(deadline - time.time(), 2))
                continue
            if not held:
                lost.set()
                return
            deadline = time.time() + self.queue.lease_s

    async def _release(self, slot: int) -> None:
        try:
            await self.server.writer.call(self._slots.release_slot, self.record.id, slot,
                                          self.node)
        except StorageError as exc:  # the lease runs out by itself
            log.warning("release_failed", node=self.node, slot=slot, error=str(exc))
