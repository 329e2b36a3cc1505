"""Deferred reveals sent to the bots connected to this process.

A duplicate tournament's sealed matches are *lifted* in the store when
their deck set is played out (``arena.tournament.reveals``); from then on
every process that holds bot connections sends each of its connected bots
the ``reveal`` messages (protocol §6) it is owed, whichever process played
the matches: the node that finished the set, the director's poll of an
``arena serve`` node, and every worker of ``arena serve --workers`` (whose
bots are connected to the worker, not to the parent that directs
tournaments). The store's claims make it once per bot and match, across
processes, nodes and restarts (``arena.storage.reveal_table``).
"""

from __future__ import annotations

import asyncio
from typing import Any, Protocol

import structlog

from arena.storage.base import StorageError, Store
from arena.storage.node_lock import UNNAMED
from arena.storage.writer import StoreWriter
from protocol.messages import Reveal

log = structlog.get_logger("arena.server.reveal_courier")

# Stored events sent sealed during a sealed match, and in full with its
# reveal: the record of a thirteen showdown is its full form.
SEALED_KINDS = frozenset({"showdown"})

# The names the server gives house seats (arena.server.seating):
# house-<kind>-<n>. A house bot is no connection and is sent nothing.
_HOUSE_PREFIX = "house-"


class RevealHost(Protocol):
    """What the courier uses of a server."""

    store: Store
    writer: StoreWriter

    def connected_bots(self) -> set[str]: ...

    def send_to_bots(self, names: set[str], message: dict[str, Any]) -> int: ...


def is_house_name(name: str) -> bool:
    if not name.startswith(_HOUSE_PREFIX):
        return False
    kind, _, number = name[len(_HOUSE_PREFIX):].rpartition("-")
    return bool(kind) and number.isdigit()


def reveal_message(store: Store, match_id: str) -> dict[str, Any]:
    """The ``reveal`` message of a finished sealed match."""
    match = store.get_match(match_id)
    events = [e.data for e in store.get_events(match.id) if e.data.get("kind") in SEALED_KINDS]
    return Reveal(match.id, list(match.reveal or []), events).to_wire()


def _messages(store: Store, match_ids: list[str]) -> dict[str, dict[str, Any]]:
    return {m: reveal_message(store, m) for m in match_ids}


class RevealCourier:
    """Sends the bots connected to this process the lifted reveals they are owed."""

    def __init__(self, server: RevealHost) -> None:
        self.server = server
        self.node = getattr(server.store, "node", None) or UNNAMED

    async def lift(self, tournament_id: str, match_ids: list[str]) -> None:
        """Record these matches as revealed (idempotent)."""
        if match_ids:
            await self.server.writer.call(self.server.store.lift_reveals, tournament_id,
                                          match_ids)

    async def deliver(self) -> int:
        """One round: claim and send every reveal owed to a bot connected
        here; returns how many messages went out. A claim whose bot left
        before its message went out is given back, for its next node."""
        store, writer = self.server.store, self.server.writer
        here = sorted(b for b in self.server.connected_bots() if not is_house_name(b))
        if not here:
            return 0
        pending = await writer.read(store.pending_reveals, here)
        if not pending:
            return 0
        won = await writer.call(store.claim_reveals, pending, self.node)
        owed: dict[str, list[str]] = {}
        for match_id, bot in won:
            owed.setdefault(match_id, []).append(bot)
        try:
            messages = await writer.read(_messages, store, list(owed))
        except asyncio.CancelledError:
            # Cancelled between the claim and the send (a runner's poll is
            # when its tournament ends): the claims go back, or these bots
            # would never be sent these reveals by any node.
            try:
                await writer.call(store.unclaim_reveals, won, self.node)
            except Exception as exc:  # nothing may stand in for the cancellation
                log.warning("reveal_claims_kept", node=self.node, claims=len(won),
                            error=repr(exc))
            raise
        sent, gone = 0, []
        for match_id, bots in owed.items():
            for bot in bots:
                n = self.server.send_to_bots({bot}, messages[match_id])
                if n == 0:
                    gone.append((match_id, bot))
                sent += n
            log.info("deck_set_revealed", match=match_id, bots=bots, node=self.node)
        if gone:
            await writer.call(store.unclaim_reveals, gone, self.node)
        return sent


async def poll_reveals(server: RevealHost, every_s: float = 1.0) -> None:
    """Send this process's bots what they are owed, every ``every_s``, until
    cancelled. A store outage skips rounds."""
    courier = RevealCourier(server)
    while True:
        try:
            await courier.deliver()
        except StorageError as exc:
            log.warning("reveals_not_polled", node=courier.node, error=str(exc))
        await asyncio.sleep(every_s)


class RevealPoll:
    """A server service: :func:`poll_reveals` for a process that directs no
    tournament (a worker of ``arena serve --workers``), whose bots would
    otherwise be sent their owed reveals by nobody."""

    def __init__(self, every_s: float = 1.0) -> None:
        self.every_s = every_s
        self._task: asyncio.Task[None] | None = None

    async def start(self, server: RevealHost) -> None:
        self._task = asyncio.get_running_loop().create_task(poll_reveals(server, self.every_s))

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
