"""Seats: a hosted bot plays one match at a time on the whole store.

Every node of a store runs its own ladder, and every node can start any
hosted bot. Before a node seats hosted bots in a ladder or validation match
it claims their seats in the store (``hosted_seats``, judged on the
database's clock like build claims and slot leases); it renews them while
the match plays and gives them back when it ends. Another node's ladder
leaves a seated bot out; a node that died keeps its bots seated only until
their leases run out (``SEAT_LEASE_S``), then any node seats them again.

Remote bots that opted in to the ladder need no seat: each is connected to
one node's lobby, and only that node's ladder can seat it.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import AsyncIterator, Iterable

import structlog

from arena.hosting.errors import SeatTakenError
from arena.hosting.versions import VersionStore

log = structlog.get_logger("arena.hosting.seats")

# A seat lasts this long without renewal; the node playing renews it every
# third of that, so only a node that died (or lost the store that long)
# loses it, and its bots are back on the ladder this long after.
SEAT_LEASE_S = 90.0


@contextlib.asynccontextmanager
async def seated(versions: VersionStore, bots: Iterable[str], *,
                 lease_s: float = SEAT_LEASE_S) -> AsyncIterator[list[str]]:
    """Hold the seats of ``bots`` (hosted bots) for the block; raises
    :class:`SeatTakenError` (holding none) if another node has one seated."""
    taken: list[str] = []
    try:
        for bot in sorted(set(bots)):
            if not await asyncio.to_thread(versions.claim_seat, bot, lease_s):
                raise SeatTakenError(f"hosted bot {bot!r} is playing a match on another node "
                                     "of the store; it is seated here once that match ends")
            taken.append(bot)
        renewal = asyncio.get_running_loop().create_task(_renew(versions, taken, lease_s))
        try:
            yield taken
        finally:
            renewal.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await renewal
    finally:
        for bot in taken:
            try:
                await asyncio.to_thread(versions.release_seat, bot)
            except Exception as exc:  # noqa: BLE001 - the store is away: the lease runs out
                log.warning("hosted_seat_not_released", bot=bot, error=str(exc))


async def _renew(versions: VersionStore, bots: list[str], lease_s: float) -> None:
    while True:
        await asyncio.sleep(lease_s / 3)
        for bot in bots:
            try:
                kept = await asyncio.to_thread(versions.claim_seat, bot, lease_s)
            except Exception as exc:  # noqa: BLE001 - the store is away: try again next round
                log.warning("hosted_seat_not_renewed", bot=bot, error=str(exc))
                continue
            if not kept:  # out of the store longer than the lease: another node took it
                log.warning("hosted_seat_lost", bot=bot)
