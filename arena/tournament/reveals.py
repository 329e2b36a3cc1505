"""Deferred reveals: no bot learns a deck while a match that deals it is unplayed.

In a duplicate tournament every rotation of a table (every slot with the
same ``seed``: its deck set) deals the same decks. Each of those matches is
played *sealed* (``MatchSession.sealed``): its ``match_end`` carries the
result and no reveal, and a thirteen showdown shows a seat only its own
rows. When the last match of the deck set is over, each of its matches is
revealed to its bots that are connected to this node: a ``reveal`` message
(protocol §6) with the decks, their salts and the full showdowns, so every
commitment a bot kept can be checked. A bot that is not connected then (or
is connected to another node) reads the same from the HTTP API, whose
embargo lifts at the same moment (``arena.web.queries``).

Every match of a set of several is sealed, the last one too: a match that is
aborted is played again on the same decks, so none of them may show a deal
early.
"""

from __future__ import annotations

from typing import Any

from arena.storage.base import ScheduledMatch, Store
from arena.tournament.plan import house_strategy
from protocol.messages import Reveal

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


def reveal_messages(store: Store, slots: list[ScheduledMatch]) -> list[tuple[set[str], dict[str, Any]]]:
    """(the match's entrants, its ``reveal`` message) for each played slot."""
    messages = []
    for slot in slots:
        if slot.match_id is None:
            continue
        match = store.get_match(slot.match_id)
        events = [e.data for e in store.get_events(match.id) if e.data.get("kind") in SEALED_KINDS]
        names = {p for p in match.players if house_strategy(p) is None}
        messages.append((names, Reveal(match.id, list(match.reveal or []), events).to_wire()))
    return messages
