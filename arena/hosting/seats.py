"""Seats: a hosted bot plays one match at a time on the whole store.

Every node of a store runs its own ladder, and every node can start any
hosted bot. Before a node seats hosted bots in a ladder or validation match
it claims their seats in the store (``hosted_seats``, judged on the
database's clock like build claims and slot leases); it renews them while
the match plays and gives them back when it ends. Another node's ladder
leaves a seated bot out; a node that died keeps its bots seated only until
their leases run out (``SEAT_LEASE_S``), then any node seats them again.

Tournament entrants and challenge matches take the same seat for their
runs (:class:`SeatKeeper` in ``HostedBots``), so no node's ladder starts a
bot one of them plays. A node that cannot renew a seat in time (the store
away) gives it up and stops the bot's run before the lease runs out, so the
node that seats it next never runs it beside a run left here.

Remote bots that opted in to the ladder need no seat: each is connected to
one node's lobby, and only that node's ladder can seat it.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from typing import AsyncIterator, Awaitable, Callable, Iterable

import structlog

from arena.hosting.errors import HostingSettingsError, SeatTakenError
from arena.hosting.versions import VersionStore

log = structlog.get_logger("arena.hosting.seats")

# A seat lasts this long without renewal; the node playing renews it every
# third of that, so only a node that died (or lost the store that long)
# loses it, and its bots are back on the ladder this long after.
SEAT_LEASE_S = 90.0
# A node that could not renew a seat this long gives the seat up (and stops
# the runs it was for) before another node may take it: never two sandboxes
# of one bot, even when the store was away for long.
SEAT_GIVE_UP_S = 75.0
# A tournament entrant whose bot plays a ladder match on another node waits
# this long for that match to end (ladder matches last a minute or two).
ENTRANT_SEAT_WAIT_S = 300.0


def check_give_up(lease_s: float, give_up_s: float) -> None:
    """Raise :class:`HostingSettingsError` unless a keeper renewing every
    third of ``lease_s`` can give a seat up after ``give_up_s`` safely."""
    if not lease_s > 0:
        raise HostingSettingsError(f"the seat lease must be above 0 s (got {lease_s:g})")
    if not give_up_s < lease_s:
        raise HostingSettingsError(
            f"the seat give-up ({give_up_s:g} s) must be below the seat lease ({lease_s:g} s): "
            "a node must stop a bot's run before another node may seat the bot")
    if not give_up_s > lease_s / 3:
        raise HostingSettingsError(
            f"the seat give-up ({give_up_s:g} s) must be above a third of the seat lease "
            f"({lease_s / 3:g} s), when a seat is first renewed: below it every seat "
            "would be given up before its first renewal")


@dataclass(frozen=True)
class SeatSettings:
    """An organiser's seat times (``arena serve --seat-give-up``,
    ``--entrant-seat-wait``), checked when made."""

    lease_s: float = SEAT_LEASE_S
    give_up_s: float = SEAT_GIVE_UP_S
    entrant_wait_s: float = ENTRANT_SEAT_WAIT_S

    def __post_init__(self) -> None:
        check_give_up(self.lease_s, self.give_up_s)
        if not self.entrant_wait_s >= 0:
            raise HostingSettingsError(f"the entrants' seat wait must be 0 s or more "
                                       f"(got {self.entrant_wait_s:g})")

LostSeat = Callable[[str], Awaitable[None]]


class SeatKeeper:
    """The seats this node holds, each for one or more runs (a tournament
    match may seat v6 and v7 of one bot), renewed every third of the lease
    while any is held. A seat that could not be renewed for ``give_up_s``
    (the store away; by default 5/6 of the lease, 75 s of 90), or that
    another node holds now, is given up: ``on_lost(bot)`` stops its runs."""

    def __init__(self, versions: VersionStore, *, lease_s: float = SEAT_LEASE_S,
                 give_up_s: float | None = None, on_lost: LostSeat | None = None) -> None:
        self.versions = versions
        self.lease_s = lease_s
        self.give_up_s = lease_s * SEAT_GIVE_UP_S / SEAT_LEASE_S if give_up_s is None \
            else give_up_s
        check_give_up(lease_s, self.give_up_s)
        self.on_lost = on_lost
        self.holders: dict[str, set[str]] = {}  # bot -> the runs its seat is for
        self._renewed: dict[str, float] = {}  # bot -> when its last kept claim was sent
        self._lost: set[str] = set()  # given up; its row (if a late claim left one) goes too
        self._task: asyncio.Task[None] | None = None
        self._claiming: asyncio.Future[bool] | None = None  # a renewal in its thread
        self._closed = False  # close() was called: no renewal starts again

    def bots(self) -> set[str]:
        return set(self.holders)

    async def take(self, bot: str, holder: str, *, wait_s: float = 0.0) -> None:
        """Seat ``bot`` for ``holder``; while another node has it seated, try
        again for ``wait_s`` seconds, then raise :class:`SeatTakenError`."""
        if bot in self.holders:
            self.holders[bot].add(holder)
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait_s
        while True:
            sent = loop.time()
            if await asyncio.to_thread(self.versions.claim_seat, bot, self.lease_s):
                break
            if loop.time() >= deadline:
                raise SeatTakenError(f"hosted bot {bot!r} is playing a match on another node "
                                     "of the store; it is seated here once that match ends")
            await asyncio.sleep(min(0.5, max(0.0, deadline - loop.time())))
        if bot in self.holders:  # taken meanwhile by another holder here
            self.holders[bot].add(holder)
            return
        self.holders[bot] = {holder}
        self._renewed[bot] = sent
        if self._task is None or self._task.done():
            self._task = loop.create_task(self._renew())

    async def give_back(self, bot: str, holder: str) -> None:
        """``holder`` is done; the seat is given back when nobody here needs it."""
        holders = self.holders.get(bot)
        if holders is None:
            if bot not in self._lost:
                return
            self._lost.discard(bot)  # a renewal that ended late may have kept its row
        else:
            holders.discard(holder)
            if holders:
                return
            del self.holders[bot]
            self._renewed.pop(bot, None)
        # A renewal still in its thread would write the seat again after the
        # release; no new one starts for this bot now, so wait for that one.
        await self._claim_in_flight()
        try:
            await asyncio.to_thread(self.versions.release_seat, bot)
        except Exception as exc:  # noqa: BLE001 - the store is away: the lease runs out
            log.warning("hosted_seat_not_released", bot=bot, error=str(exc))

    async def close(self) -> None:
        """Stop renewing; a renewal under way in its thread ends first, so
        it cannot claim a seat again after it was given back."""
        self._closed = True
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await self._claim_in_flight()

    async def _claim_in_flight(self) -> None:
        """Wait for a renewal's claim still in its thread (cancelling the
        task that sent it does not stop the thread), for at most a lease:
        a claim that ends after a release writes the seat again."""
        claiming = self._claiming
        if claiming is not None and not claiming.done():
            await asyncio.wait([claiming], timeout=self.lease_s)

    async def _renew(self) -> None:
        loop = asyncio.get_running_loop()
        while self.holders and not self._closed:
            await asyncio.sleep(self.lease_s / 6)
            for bot in list(self.holders):
                renewed = self._renewed.get(bot)
                if renewed is None:
                    continue
                give_up_at = renewed + self.give_up_s
                if loop.time() - renewed < self.lease_s / 3 - 1e-6:
                    continue  # renewed recently enough
                sent = loop.time()
                claim = self._claiming = asyncio.ensure_future(
                    asyncio.to_thread(self.versions.claim_seat, bot, self.lease_s))
                # Its failure is handled below, or was given up on (a late one).
                claim.add_done_callback(lambda f: f.cancelled() or f.exception())
                try:
                    # asyncio.timeout, not wait_for: on Python 3.11 wait_for
                    # swallows a cancel that comes as the claim ends, and
                    # close() then waited for ever on a keeper renewing on.
                    async with asyncio.timeout(max(0.0, give_up_at - sent)):
                        kept: bool | None = await asyncio.shield(claim)
                except Exception as exc:  # noqa: BLE001 - the store is away: try again soon
                    log.warning("hosted_seat_not_renewed", bot=bot, error=str(exc) or
                                type(exc).__name__)
                    kept = None
                if bot not in self.holders:
                    continue  # given back meanwhile
                if kept:
                    self._renewed[bot] = sent
                elif kept is False or loop.time() >= give_up_at:
                    # Lost (another node seats it now) or about to be lost:
                    # its runs here stop before another node may start one.
                    log.warning("hosted_seat_lost", bot=bot,
                                reason="taken" if kept is False else "store_unreachable")
                    del self.holders[bot]
                    self._renewed.pop(bot, None)
                    self._lost.add(bot)
                    if self.on_lost is not None:
                        await self.on_lost(bot)


@contextlib.asynccontextmanager
async def seated(versions: VersionStore, bots: Iterable[str], *,
                 lease_s: float = SEAT_LEASE_S, give_up_s: float | None = None,
                 on_lost: LostSeat | None = None) -> AsyncIterator[list[str]]:
    """Hold the seats of ``bots`` (hosted bots) for the block; raises
    :class:`SeatTakenError` (holding none) if another node has one seated.
    ``on_lost(bot)``: a seat given up mid-block (see :class:`SeatKeeper`)."""
    keeper = SeatKeeper(versions, lease_s=lease_s, give_up_s=give_up_s, on_lost=on_lost)
    taken: list[str] = []
    try:
        for bot in sorted(set(bots)):
            await keeper.take(bot, "table")
            taken.append(bot)
        yield taken
    finally:
        await keeper.close()
        for bot in taken:
            await keeper.give_back(bot, "table")
