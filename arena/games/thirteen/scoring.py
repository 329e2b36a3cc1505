"""Rules §3–4: fouls, the pairwise segment scoring, shots and the home run.

Pure arithmetic over hand strengths (``arena.games.thirteen.evaluator``):
``score_deal`` gets, per seat, the strengths of its three segments and
whether it fouled, and returns the matrix ``M`` with ``M[i][j]`` what seat i
takes from seat j (so ``M[j][i] == -M[i][j]``) and the row sums.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from arena.games.thirteen.evaluator import Category, category_of

SEGMENTS = ("front", "middle", "back")
SHOT_BONUS = 3


@dataclass(frozen=True, slots=True)
class SeatHands:
    """One seat's three strengths (front, middle, back) and its foul."""

    front: int
    middle: int
    back: int

    @property
    def values(self) -> tuple[int, int, int]:
        return (self.front, self.middle, self.back)

    @property
    def fouled(self) -> bool:
        return is_fouled(self.front, self.middle, self.back)


@dataclass(frozen=True, slots=True)
class DealScore:
    pairs: tuple[tuple[int, ...], ...]  # M[i][j]
    scores: tuple[int, ...]  # row sums
    fouled: tuple[bool, ...]
    shots: tuple[tuple[bool, ...], ...]  # shots[i][j]: i won all three segments against j
    home_runs: tuple[bool, ...]


def is_fouled(front: int, middle: int, back: int) -> bool:
    """§3: the rows must not weaken from back to front (equal is allowed)."""
    return not (front <= middle <= back)


def segment_points(segment: int, winner: int, mid_full_house_bonus: int) -> int:
    """What winning segment 0/1/2 with strength ``winner`` is worth (§4):
    1, plus the bonus of the winner's hand in that segment."""
    cat = category_of(winner)
    if segment == 0:
        return 2 if cat == Category.THREE_OF_A_KIND else 1
    if segment == 1:
        if cat == Category.STRAIGHT_FLUSH:
            return 1 + 4
        if cat == Category.FOUR_OF_A_KIND:
            return 1 + 3
        if cat == Category.FULL_HOUSE:
            return 1 + mid_full_house_bonus
        return 1
    if cat == Category.STRAIGHT_FLUSH:
        return 1 + 3
    if cat == Category.FOUR_OF_A_KIND:
        return 1 + 2
    return 1


def _pair(a: SeatHands, fa: bool, b: SeatHands, fb: bool, shoot: str, mfh: int) -> tuple[int, int]:
    """(what a takes from b, +1 if a shot b / -1 if b shot a / 0)."""
    if fa and fb:
        return 0, 0
    net = 0
    won_a = won_b = 0
    for seg, (va, vb) in enumerate(zip(a.values, b.values)):
        # A fouled seat loses every segment, whatever its cards.
        if fb or (not fa and va > vb):
            net += segment_points(seg, va, mfh)
            won_a += 1
        elif fa or vb > va:
            net -= segment_points(seg, vb, mfh)
            won_b += 1
    shot = 1 if won_a == 3 else -1 if won_b == 3 else 0
    if shot:
        if shoot == "double":
            net *= 2
        else:
            net += SHOT_BONUS * shot
    return net, shot


def score_deal(seats: Sequence[SeatHands], *, shoot: str = "plus3", mid_full_house_bonus: int = 2) -> DealScore:
    n = len(seats)
    fouled = tuple(s.fouled for s in seats)
    m = [[0] * n for _ in range(n)]
    shots = [[False] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1, n):
            net, shot = _pair(seats[i], fouled[i], seats[j], fouled[j], shoot, mid_full_house_bonus)
            m[i][j], m[j][i] = net, -net
            shots[i][j], shots[j][i] = shot == 1, shot == -1
    # Home run: shooting every opponent (at least two of them) doubles each
    # of those nets, after any shot doubling.
    home = tuple(n >= 3 and all(shots[i][j] for j in range(n) if j != i) for i in range(n))
    for i in range(n):
        if home[i]:
            for j in range(n):
                if j != i:
                    m[i][j] *= 2
                    m[j][i] = -m[i][j]
    return DealScore(
        pairs=tuple(tuple(row) for row in m),
        scores=tuple(sum(row) for row in m),
        fouled=fouled,
        shots=tuple(tuple(row) for row in shots),
        home_runs=home,
    )


def rank_places(totals: Sequence[int]) -> list[int]:
    """Higher total first; equal totals share a place and the next skips (1, 1, 3)."""
    return [1 + sum(1 for other in totals if other > t) for t in totals]
