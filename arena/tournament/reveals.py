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
(:class:`~arena.server.reveal_courier.RevealCourier`; a worker of ``arena
serve --workers`` polls for its own bots too), right after it finishes a set and at every poll of
its director; the store's claims make it once per bot and match, whichever
node the bot is on and across restarts (``arena.storage.reveal_table``). A
bot that connects later is sent what it is owed at the next poll.

Every match of a set of several is sealed, the last one too: a match that is
aborted is played again on the same decks, so none of them may show a deal
early.
"""

from __future__ import annotations

from arena.server.reveal_courier import (SEALED_KINDS, RevealCourier, poll_reveals,
                                         reveal_message)
from arena.storage.base import ScheduledMatch
from arena.tournament.host import MatchHost

__all__ = ["SEALED_KINDS", "RevealCourier", "poll_reveals", "reveal_message", "deck_set",
           "is_sealed", "deck_set_over", "lifted_matches", "reveal_if_over",
           "reveal_played_sets"]


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
