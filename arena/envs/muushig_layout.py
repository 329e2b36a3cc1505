"""Where each Muushig feature and action sits in the arrays (docs/envs.md).

Kept apart from the codec so the compiled face (``muushig_face``, built by
mypyc with the engine) reads them as constants folded into its code, not
as globals looked up at every store.
"""

from __future__ import annotations

from typing import Final

DECIDE_BASE: Final = 0
EXCHANGE_BASE: Final = 2
TAKE_BASE: Final = 34
PLAY_BASE: Final = 67
N_ACTIONS: Final = 99
SEATS: Final = 5  # features have room for the largest table; smaller ones leave zeros

# Offsets of the feature blocks.
CARDS: Final = 0
FACE_UP: Final = 32
TRICK: Final = 64
PLAYED: Final = 96
TRUMP: Final = 128
PHASE: Final = TRUMP + 4
STATUS: Final = PHASE + 4  # 3 per seat
SCORES: Final = STATUS + 3 * SEATS
STARS: Final = SCORES + SEATS
TRICKS: Final = STARS + SEATS
EXCHANGES: Final = TRICKS + SEATS
DEALER: Final = EXCHANGES + SEATS
TO_ACT: Final = DEALER + SEATS
LEADER: Final = TO_ACT + SEATS
SCALARS: Final = LEADER + SEATS  # stock, max_discard, face_up_taken, round, hand
N_FEATURES: Final = SCALARS + 5
