"""A table's pause while the store writer catches up (sans-IO).

A table does not run a step while the store writer's backlog is at its
bound (``StoreWriter.full``): a slow or stalled disk then slows or stops the
tables that feed it instead of growing the writer's buffers. For the pause
to be fair to bots the table's clock stands still while it lasts: the time
the table gives its session is the loop's time minus every pause so far,
and the inputs that arrive meanwhile (answers, drops, returns, the start)
are held and applied in order at the paused instant once the writer has
room. A request's deadline moves on by the pause; no bot is charged for it.

Held answers are bounded per seat: a bot that keeps sending while the
match stands still is refused (``rate_limited``) beyond
:data:`HELD_ANSWERS_PER_SEAT`, as a legal bot sends one answer per request.
"""

from __future__ import annotations

import enum
from collections import deque
from dataclasses import dataclass
from typing import Final

from arena.games.base import GameAction
from protocol.codec import Encoding

HELD_ANSWERS_PER_SEAT: Final = 8


class HeldKind(enum.Enum):
    START = "start"
    ANSWER = "answer"
    DISCONNECT = "disconnect"
    RECONNECT = "reconnect"


@dataclass(frozen=True)
class HeldInput:
    """One input for the session that waits for the pause to end."""

    kind: HeldKind
    seat: int = -1
    request_id: int = 0
    action: GameAction = None
    encoding: Encoding | None = None


class TablePause:
    """The table's clock and the inputs held while the writer is full.

    Every method takes the loop's time ``loop_now``; :meth:`clock` turns it
    into the table's time, which stands still from :meth:`begin` to
    :meth:`end`."""

    def __init__(self, held_answers_per_seat: int = HELD_ANSWERS_PER_SEAT) -> None:
        self.held_answers_per_seat = held_answers_per_seat
        self.paused_s = 0.0  # loop time the table's clock stood still, in total
        self.since: float | None = None  # loop time the pause began; None: running
        self.pauses = 0
        self._held: deque[HeldInput] = deque()
        self._answers_held: dict[int, int] = {}

    @property
    def paused(self) -> bool:
        return self.since is not None

    def clock(self, loop_now: float) -> float:
        """The table's time: the loop's, minus the pauses (frozen in one)."""
        since = self.since
        return (loop_now if since is None else since) - self.paused_s

    def begin(self, loop_now: float) -> None:
        if self.since is None:
            self.since = loop_now
            self.pauses += 1

    def end(self, loop_now: float) -> None:
        """The writer has room: the clock runs on from the paused instant."""
        since = self.since
        if since is not None:
            self.paused_s += max(0.0, loop_now - since)
            self.since = None

    def hold(self, held: HeldInput) -> bool:
        """Keep ``held`` for later; False (not kept) for an answer over its
        seat's bound."""
        if held.kind is HeldKind.ANSWER:
            count = self._answers_held.get(held.seat, 0)
            if count >= self.held_answers_per_seat:
                return False
            self._answers_held[held.seat] = count + 1
        self._held.append(held)
        return True

    def next_held(self) -> HeldInput | None:
        """The oldest held input, taken out; None when none is left."""
        if not self._held:
            return None
        held = self._held.popleft()
        if held.kind is HeldKind.ANSWER:
            self._answers_held[held.seat] -= 1
        return held

    def __len__(self) -> int:
        return len(self._held)
