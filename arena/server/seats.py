"""Who sits where at a table, and what each seat has done wrong."""

from __future__ import annotations

import enum
import statistics
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from arena.games.base import HouseBot
from arena.storage.base import SeatFaults

if TYPE_CHECKING:
    from arena.server.connection import BotConnection


class SeatKind(str, enum.Enum):
    REMOTE = "remote"  # a bot connected over TCP (local subprocesses too)
    HOUSE = "house"  # an in-process house bot


class AutopilotReason(str, enum.Enum):
    DISCONNECTED = "disconnected"
    TIMEOUTS = "timeouts"
    # (the ``autopilot`` event's reason ``returned`` says a seat's bot is
    # back: the seat is then no longer on autopilot)


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
    latencies_ms: list[float] = field(default_factory=list)
    issued: set[int] = field(default_factory=set)  # request ids sent here

    def faults(self) -> SeatFaults:
        return SeatFaults(timeouts=self.timeouts, illegal=self.illegal,
                          disconnects=self.disconnects, autopilot=self.autopilot is not None)

    def median_latency_ms(self) -> float | None:
        return statistics.median(self.latencies_ms) if self.latencies_ms else None


@dataclass(slots=True)
class PendingRequest:
    """A request sent to a seat and not answered yet (one per seat at most).

    ``legal`` is what the seat's house bot gets as its second argument if
    it has to answer instead: the request's ``legal`` list, or its
    ``constraints`` for a game without one.
    """

    id: int
    seat: int
    phase: str
    legal: Any
    wire: dict[str, Any]
    sent_at: float  # the session's clock
    deadline_s: float
    deadline_at: float  # the session's clock
