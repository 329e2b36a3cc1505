"""The state of one Muushig hand (and, from ``phases``, the stage machine).

:class:`HandState` holds everything that lives for one hand (one deal) and
starts afresh with the next; the engine keeps what lasts longer (scores,
stars, the dealer) itself. Cards are ints 0..31, a seat's cards a bit mask.

Stages follow :data:`~.phases.TRANSITIONS` (in the manner of h11's
``_state.py``): the engine asserts every change against it, so a wrong step
fails loudly in tests instead of playing on from a state the rules do not
have.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# The stage machine lives with the phases: this module is compiled, and a
# compiled module cannot define an exception class that derives from a
# built-in one. Imported here, where the engine and the tests look for it.
from arena.games.muushig.phases import TRANSITIONS, WAITING, StageError, check_transition

__all__ = ["TRANSITIONS", "HandState", "StageError", "check_transition"]


@dataclass(slots=True)
class HandState:
    """Everything of the hand being played; read-only outside the engine."""

    hands: list[int]  # per seat: its cards as a bit mask
    status: list[int]  # per seat: WAITING, ENTERED or FOLDED
    exchanges: list[int | None]  # per seat: cards exchanged, None = not (yet) asked
    discards: list[int]  # per seat: the cards it discarded, as a mask
    tricks: list[int]  # per seat: tricks won this hand
    next_entered: list[int]  # per seat: the entered seat that plays after it
    face_up: int = 0
    trump: int = 0  # suit number
    stock: tuple[int, ...] = ()
    stock_drawn: int = 0  # cards already drawn from the stock
    speaking_order: list[int] = field(default_factory=list)  # dealer last
    decide_position: int = 0  # index into speaking_order of the seat to decide
    entered: list[int] = field(default_factory=list)  # entered seats, speaking order
    exchange_position: int = 0  # index into entered of the seat to exchange
    exchange_limit: int = 0  # most cards the current seat may discard
    face_up_taken: bool = False
    take_discard: int | None = None
    played: list[tuple[int, tuple[tuple[int, int], ...], int]] = field(default_factory=list)
    trick: list[tuple[int, int]] = field(default_factory=list)  # (seat, card) so far
    leader: int | None = None
    led_suit: int = 0
    winning_card: int = 0
    winning_seat: int = 0
    trumped: bool = False

    @classmethod
    def new(cls, n_seats: int) -> "HandState":
        return cls(hands=[0] * n_seats, status=[WAITING] * n_seats, exchanges=[None] * n_seats,
                   discards=[0] * n_seats, tricks=[0] * n_seats, next_entered=[0] * n_seats)

    @property
    def stock_left(self) -> int:
        return len(self.stock) - self.stock_drawn
