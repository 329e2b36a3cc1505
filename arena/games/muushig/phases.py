"""Constants shared by the engine and its wire boundary: phases, seat
statuses, the integer codes of the fast API, the game's fixed numbers and
the stage machine."""

from __future__ import annotations

from enum import StrEnum
from itertools import combinations
from typing import Final

START_SCORE: Final = 15  # §2: every seat starts a round with 15
HAND_SIZE: Final = 5  # cards per seat, hence tricks per hand
MUUSHIG_BONUS: Final = 5  # §8.2


class Phase(StrEnum):
    DECIDE = "decide"
    EXCHANGE = "exchange"
    TAKE = "take"
    PLAY = "play"


# Internal stage numbers; the first four are also the pending phase. One
# Final literal each: compiled code then uses the number itself.
DECIDE: Final = 0
EXCHANGE: Final = 1
TAKE: Final = 2
PLAY: Final = 3
OVER: Final = 4
# Plain strings (not the enum) so they encode as-is on the wire.
PHASES: Final[tuple[str, ...]] = tuple(p.value for p in (Phase.DECIDE, Phase.EXCHANGE, Phase.TAKE, Phase.PLAY))

WAITING: Final = 0
ENTERED: Final = 1
FOLDED: Final = 2
STATUS_NAMES: Final = ("waiting", "entered", "folded")

FOLD: Final = 0  # decide codes
ENTER: Final = 1
DECLINE: Final = -1  # take code: keep the hand, leave the face-up card

# POS_SETS[(cards in hand, limit)]: the exchange codes (bit i = discard the
# i-th card of the hand in canonical order) in protocol order: by size, then
# card by card -- which is what ``combinations`` of positions yields.
POS_SETS: Final[dict[tuple[int, int], tuple[int, ...]]] = {
    (n, lim): tuple(sum(1 << p for p in c) for k in range(min(n, lim) + 1) for c in combinations(range(n), k))
    for n in range(HAND_SIZE + 1)
    for lim in range(HAND_SIZE + 1)
}


# Which stage may follow which. A stage may follow itself: the next seat is
# asked in the same stage. DECIDE follows TAKE/PLAY/DECIDE when a hand ends
# and the next is dealt; OVER ends the match.
TRANSITIONS: Final[dict[int, frozenset[int]]] = {
    OVER: frozenset({DECIDE}),  # start(): the first deal
    DECIDE: frozenset({DECIDE, EXCHANGE, OVER}),
    EXCHANGE: frozenset({EXCHANGE, TAKE}),
    TAKE: frozenset({TAKE, PLAY}),
    PLAY: frozenset({PLAY, DECIDE, OVER}),
}


class StageError(AssertionError):
    """The engine tried a stage change the stage machine does not allow."""


def check_transition(old: int, new: int) -> None:
    if new not in TRANSITIONS[old]:
        raise StageError(f"stage {old} cannot be followed by stage {new}")
