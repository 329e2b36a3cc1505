"""Who sits where at a table, and what each seat has done wrong."""

from __future__ import annotations

import bisect
import enum
import statistics
from array import array
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from arena.games.base import HouseBot
from arena.storage.base import SeatFaults

if TYPE_CHECKING:
    from arena.server.connection import BotConnection


class SeatKind(str, enum.Enum):
    REMOTE = "remote"  # a bot connected over TCP (local subprocesses too)
    HOUSE = "house"  # an in-process house bot
    # A person at the play page: asked and timed like a remote bot (with
    # limits of its own), but never what keeps a match waiting for bots.
    PERSON = "person"


class AutopilotReason(str, enum.Enum):
    DISCONNECTED = "disconnected"
    TIMEOUTS = "timeouts"
    # (the ``autopilot`` event's reason ``returned`` says a seat's bot is
    # back: the seat is then no longer on autopilot)


class IssuedIds:
    """The request ids a session sent to one seat, 4 bytes each (a set of
    ints costs some 60 bytes per id).

    A session numbers its requests 1, 2, 3, ..., so each seat's ids come in
    increasing order: appended, they stay sorted and "was this id ever sent
    here" is a binary search."""

    __slots__ = ("_ids",)

    def __init__(self) -> None:
        self._ids = array("I")

    def add(self, request_id: int) -> None:
        self._ids.append(request_id)

    def __contains__(self, request_id: object) -> bool:
        # An id a bot made up (any size, any type) is simply not ours.
        if not isinstance(request_id, int):
            return False
        ids = self._ids
        at = bisect.bisect_left(ids, request_id)
        return at < len(ids) and ids[at] == request_id

    def __len__(self) -> int:
        return len(self._ids)


@dataclass
class Seat:
    index: int
    name: str
    kind: SeatKind
    house: HouseBot  # plays house seats, and remote seats on autopilot
    token_hash: str | None = None
    conn: "BotConnection | None" = None
    autopilot: AutopilotReason | None = None
    bank_ms: float = 0.0
    consecutive_timeouts: int = 0
    timeouts: int = 0
    illegal: int = 0
    disconnects: int = 0
    # Milliseconds per decision, 8 bytes each (a list of floats takes 32).
    latencies: array[float] = field(default_factory=lambda: array("d"))
    issued: IssuedIds = field(default_factory=IssuedIds)  # request ids sent here
    # This seat's own clock (a person's), else the match's (a TimeLimits).
    limits: Any = None

    @property
    def latencies_ms(self) -> list[float]:
        """Every decision's latency, in order: a new list (what is stored)."""
        return self.latencies.tolist()

    def faults(self) -> SeatFaults:
        return SeatFaults(timeouts=self.timeouts, illegal=self.illegal,
                          disconnects=self.disconnects, autopilot=self.autopilot is not None)

    def median_latency_ms(self) -> float | None:
        return statistics.median(self.latencies) if self.latencies else None


class PendingRequest:
    """A request sent to a seat and not answered yet (one per seat at most).

    ``legal`` is what the seat's house bot gets as its second argument if
    it has to answer instead: the request's ``legal`` list, or its
    ``constraints`` for a game without one.

    A plain class, not a dataclass: one is made per decision, and a compiled
    dataclass still builds its instances through the interpreted
    ``__init__`` the dataclass machinery writes.
    """

    __slots__ = ("id", "seat", "phase", "legal", "wire", "sent_at", "deadline_s", "deadline_at")

    def __init__(self, id: int, seat: int, phase: str, legal: Any, wire: dict[str, Any],
                 sent_at: float, deadline_s: float, deadline_at: float) -> None:
        self.id = id
        self.seat = seat
        self.phase = phase
        self.legal = legal
        self.wire = wire
        self.sent_at = sent_at  # the session's clock
        self.deadline_s = deadline_s
        self.deadline_at = deadline_at  # the session's clock

    def __repr__(self) -> str:
        return (f"PendingRequest(id={self.id}, seat={self.seat}, phase={self.phase!r}, "
                f"deadline_s={self.deadline_s})")
