"""What an unfinished tournament is waiting for, said to its organiser.

A slot is played on a node where all its remote entrants are connected
(arena/tournament/shared.py). When none is open to play, the organiser
needs to know which bots the first open slot needs and where each is
connected: nowhere (start it, or check its token), or to different nodes
(connect them to one). Read from the store: the open slots (no finished
match, no live lease, on the database's clock) and the nodes' presence
rows (arena/storage/presence.py).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any

from arena.storage.base import Store, TournamentRecord, TournamentStatus
from arena.tournament.plan import house_strategy


@dataclass(frozen=True)
class WaitingEntrant:
    name: str
    connected_to: list[str]  # node names (empty: connected nowhere)


@dataclass(frozen=True)
class Waiting:
    slot: int | None  # the first open slot (None: no schedule yet)
    open_slots: int
    entrants: list[WaitingEntrant]
    reason: str
    # Entrants on different nodes: the node that holds most of them (ties:
    # the first name), where the others should connect; else None.
    gather_on: str | None = None

    def to_wire(self) -> dict[str, Any]:
        return asdict(self)


def waiting_for(store: Store, record: TournamentRecord) -> Waiting | None:
    """None when the tournament is over, or every open slot is being played."""
    if record.status not in (TournamentStatus.PENDING, TournamentStatus.RUNNING):
        return None
    open_slots = getattr(store, "open_slots", None)
    if open_slots is None:
        return None
    schedule = store.get_schedule(record.id)
    if not schedule:
        return Waiting(None, 0, [], "no node has given it its schedule yet: an 'arena serve' "
                                    "node directs it within a second of starting")
    slots = open_slots(record.id)
    if not slots:
        return None
    local = {e.get("name") for e in record.config.get("entrants") or []  # the arena starts
             if isinstance(e, dict) and (e.get("command") is not None or e.get("hosted"))}
    first = slots[0]
    present = store.present_bots()
    names = [p for p in dict.fromkeys(first.players)
             if house_strategy(p) is None and p not in local]
    entrants = [WaitingEntrant(n, present.get(n, [])) for n in names]
    gather = gather_on(entrants)
    return Waiting(first.slot, len(slots), entrants, _reason(entrants, gather), gather)


def gather_on(entrants: list[WaitingEntrant]) -> str | None:
    """For entrants all connected but with no node in common: the node
    holding most of them (ties: the first by name); else None."""
    if not entrants or any(not e.connected_to for e in entrants):
        return None
    if set.intersection(*(set(e.connected_to) for e in entrants)):
        return None
    held = Counter(node for e in entrants for node in set(e.connected_to))
    return min(held, key=lambda node: (-held[node], node))


def _reason(entrants: list[WaitingEntrant], gather: str | None) -> str:
    nowhere = [e.name for e in entrants if not e.connected_to]
    if nowhere:
        return (f"{', '.join(nowhere)} {'is' if len(nowhere) == 1 else 'are'} not connected "
                "to any node: its matches start when it connects")
    if gather is not None:
        movers = [e.name for e in entrants if gather not in e.connected_to]
        return (f"{', '.join(e.name for e in entrants)} are connected to different nodes: a "
                f"match needs all its entrants on one node; connect {', '.join(movers)} "
                f"to {gather}")
    return "its bots are connected; a node claims the slot at its next poll"
