"""Deferred reveals: no bot learns a deck while a match that deals it is unplayed.

In a duplicate tournament every rotation of a table (every slot with the
same ``seed``: its deck set) deals the same decks. Each of those matches is
played *sealed* (``MatchSession.sealed``): its ``match_end`` carries the
result and no reveal, and a thirteen showdown shows a seat only its own
rows. When the last match of the deck set is over, its matches are
*lifted* in the store (``Store.lift_reveals``) and each is revealed to the
bots that played it: a ``reveal`` message (protocol §6) with the decks,
their salts and the full showdowns, so every commitment a bot kept can be
checked. The HTTP API's embargo lifts at the same moment
(``arena.web.queries``).

The deck set may end on any node of a shared store, while the bots that
played its other matches are connected to other nodes: so every node sends
*its own* connected bots the lifted reveals they are owed
(:class:`RevealCourier`), right after it finishes a set and at every poll of
its director; the store's claims make it once per bot and match, whichever
node the bot is on and across restarts (``arena.storage.reveal_table``). A
bot that connects later is sent what it is owed at the next poll.

Every match of a set of several is sealed, the last one too: a match that is
aborted is played again on the same decks, so none of them may show a deal
early.
"""

from __future__ import annotations

from typing import Any

import asyncio

import structlog

from arena.storage.base import ScheduledMatch, StorageError, Store
from arena.storage.node_lock import UNNAMED
from arena.tournament.host import MatchHost
from arena.tournament.plan import house_strategy
from protocol.messages import Reveal

log = structlog.get_logger("arena.tournament.reveals")

# Stored events sent sealed during a sealed match, and in full with its
# reveal: the record of a thirteen showdown is its full form.
SEALED_KINDS = frozenset({"showdown"})


def deck_set(schedule: list[ScheduledMatch], slot: ScheduledMatch) -> list[ScheduledMatch]:
    """The slots that deal ``slot``'s decks (``slot`` included)."""
    return [s for s in schedule if s.seed == slot.seed]


def is_sealed(schedule: list[ScheduledMatch], slot: ScheduledMatch) -> bool:
    """Whether another slot of the schedule deals this slot's decks."""
    return len(deck_set(schedule, slot)) > 1


def deck_set_over(schedule: list[ScheduledMatch], slot: ScheduledMatch) -> bool:
    """Every match that deals ``slot``'s decks is played."""
    return all(s.match_id is not None for s in deck_set(schedule, slot))


def lifted_matches(schedule: list[ScheduledMatch]) -> list[str]:
    """The sealed matches of ``schedule`` whose deck set is played out."""
    return sorted(s.match_id for s in schedule
                  if s.match_id is not None and is_sealed(schedule, s)
                  and deck_set_over(schedule, s))


def reveal_message(store: Store, match_id: str) -> dict[str, Any]:
    """The ``reveal`` message of a finished sealed match."""
    match = store.get_match(match_id)
    events = [e.data for e in store.get_events(match.id) if e.data.get("kind") in SEALED_KINDS]
    return Reveal(match.id, list(match.reveal or []), events).to_wire()


def _messages(store: Store, match_ids: list[str]) -> dict[str, dict[str, Any]]:
    return {m: reveal_message(store, m) for m in match_ids}


class RevealCourier:
    """Sends the bots connected to this node the lifted reveals they are owed."""

    def __init__(self, server: MatchHost) -> None:
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
        here = sorted(b for b in self.server.connected_bots() if house_strategy(b) is None)
        if not here:
            return 0
        pending = await writer.read(store.pending_reveals, here)
        if not pending:
            return 0
        won = await writer.call(store.claim_reveals, pending, self.node)
        owed: dict[str, list[str]] = {}
        for match_id, bot in won:
            owed.setdefault(match_id, []).append(bot)
        messages = await writer.read(_messages, store, list(owed))
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


async def reveal_if_over(server: MatchHost, tournament_id: str, slot: ScheduledMatch) -> None:
    """The deck set of ``slot`` is played out: lift its matches' reveals in
    the store and send them to the bots connected here (the other nodes send
    theirs at their next poll)."""
    schedule = await server.writer.read(server.store.get_schedule, tournament_id)
    if not deck_set_over(schedule, slot):
        return
    courier = RevealCourier(server)
    await courier.lift(tournament_id, [s.match_id for s in deck_set(schedule, slot)
                                       if s.match_id is not None])
    await courier.deliver()


async def reveal_played_sets(server: MatchHost, tournament_id: str) -> None:
    """Lift every played-out deck set of the tournament (again: a node that
    stopped between a set's last finish and its lift left it unlifted) and
    send this node's bots what they are owed."""
    schedule = await server.writer.read(server.store.get_schedule, tournament_id)
    courier = RevealCourier(server)
    await courier.lift(tournament_id, lifted_matches(schedule))
    await courier.deliver()


async def poll_reveals(server: MatchHost, every_s: float = 1.0) -> None:
    """Send this node's bots what they are owed, every ``every_s``, until
    cancelled: the loop of a process that plays a tournament without a
    director (whose poll does the same). A store outage skips rounds."""
    courier = RevealCourier(server)
    while True:
        try:
            await courier.deliver()
        except StorageError as exc:
            log.warning("reveals_not_polled", node=courier.node, error=str(exc))
        await asyncio.sleep(every_s)
