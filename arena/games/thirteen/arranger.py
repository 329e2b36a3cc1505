"""Splitting 13 cards into front (3), middle (5) and back (5).

There are C(13,5) * C(8,5) = 72,072 splits. ``best_arrangement`` visits all
of them with precomputed position masks: each hand's 1,287 five-card and
286 three-card subsets are evaluated once, then every split costs two list
lookups, two comparisons (the foul check) and an addition.

The objective (documented for bot authors): the sum over the three segments
of the expected points of that segment against a *uniformly random* hand of
the same size: ``(P(win) - P(lose)) + P(win) * bonus``, where the bonus is
the rules' extra for that segment's category (front trips, middle full
house / four of a kind / straight flush, back four of a kind / straight
flush). Ties within the search go to the split found first (backs, then
middles, in a fixed order), so the result is deterministic. Fouled splits
are never chosen.
"""

from __future__ import annotations

import heapq
import random
from bisect import bisect_left, bisect_right
from collections import Counter
from dataclasses import dataclass
from itertools import combinations, combinations_with_replacement
from math import comb, prod
from typing import Callable

from arena.games.thirteen.cards import HAND_SIZE
from arena.games.thirteen.evaluator import (
    CARD_KEY,
    RANK_KEYS,
    THREE_TABLE,
    FIVE_TABLES,
    Wheel,
    FLUSH_OFFSET,
    key_sum_strength3,
    key_sum_strength5,
)
from arena.games.thirteen.scoring import is_fouled, segment_points

FULL = (1 << HAND_SIZE) - 1


def _mask(positions: tuple[int, ...]) -> int:
    m = 0
    for p in positions:
        m |= 1 << p
    return m


FIVES: tuple[int, ...] = tuple(_mask(c) for c in combinations(range(HAND_SIZE), 5))
THREES: tuple[int, ...] = tuple(_mask(c) for c in combinations(range(HAND_SIZE), 3))
# For every back mask, the 56 middle masks among the other eight positions.
_MIDDLES: dict[int, tuple[int, ...]] = {}
for _b in FIVES:
    _rest = [p for p in range(HAND_SIZE) if not _b >> p & 1]
    _MIDDLES[_b] = tuple(_mask(c) for c in combinations(_rest, 5))
N_SPLITS = sum(len(v) for v in _MIDDLES.values())  # 72,072


@dataclass(frozen=True, slots=True)
class Split:
    """An arrangement as card indices, each segment in canonical order."""

    front: tuple[int, ...]
    middle: tuple[int, ...]
    back: tuple[int, ...]


def _positions(hand: tuple[int, ...], mask: int) -> tuple[int, ...]:
    return tuple(sorted(hand[p] for p in range(HAND_SIZE) if mask >> p & 1))


def _split(hand: tuple[int, ...], mid: int, back: int) -> Split:
    return Split(_positions(hand, FULL ^ mid ^ back), _positions(hand, mid), _positions(hand, back))


# --- the objective: win chances against uniformly random hands -------------


def _distribution(size: int, wheel: Wheel) -> tuple[list[int], list[int]]:
    """Sorted distinct strengths of all ``size``-card hands and the cumulative
    number of hands up to each (counted by suit assignments, not enumerated)."""
    counts: Counter[int] = Counter()
    for ranks in combinations_with_replacement(range(13), size):
        per_rank = Counter(ranks).values()
        if max(per_rank) > 4:
            continue
        ways = prod(comb(4, n) for n in per_rank)
        key = sum(RANK_KEYS[r] for r in ranks)
        if size == 3:
            counts[THREE_TABLE[key]] += ways
            continue
        table = FIVE_TABLES[wheel]
        if len(per_rank) == 5:
            counts[table[key + FLUSH_OFFSET]] += 4
            ways -= 4
        counts[table[key]] += ways
    values = sorted(counts)
    cumulative, total = [], 0
    for v in values:
        total += counts[v]
        cumulative.append(total)
    return values, cumulative


class Objective:
    """Expected points per segment strength (see the module docstring)."""

    def __init__(self, wheel: Wheel, mid_full_house_bonus: int) -> None:
        self._dists = {3: _distribution(3, "lowest"), 5: _distribution(5, wheel)}
        self._mfh = mid_full_house_bonus
        self._cache: dict[tuple[int, int], float] = {}

    def win_lose(self, size: int, value: int) -> tuple[float, float]:
        values, cum = self._dists[size]
        total = cum[-1]
        lo = bisect_left(values, value)
        below = cum[lo - 1] if lo else 0
        hi = bisect_right(values, value)
        upto = cum[hi - 1] if hi else 0
        return below / total, (total - upto) / total

    def segment(self, seg: int, value: int) -> float:
        key = (seg, value)
        got = self._cache.get(key)
        if got is None:
            win, lose = self.win_lose(3 if seg == 0 else 5, value)
            bonus = segment_points(seg, value, self._mfh) - 1
            got = self._cache[key] = win - lose + win * bonus
        return got


_OBJECTIVES: dict[tuple[str, int], Objective] = {}


def objective_for(wheel: Wheel, mid_full_house_bonus: int) -> Objective:
    key = (wheel, mid_full_house_bonus)
    obj = _OBJECTIVES.get(key)
    if obj is None:
        obj = _OBJECTIVES[key] = Objective(wheel, mid_full_house_bonus)
    return obj


# --- the searches ------------------------------------------------------------


def _strengths(hand: tuple[int, ...], wheel: Wheel) -> tuple[list[int], list[int]]:
    """Strength per position mask: 5-card subsets and 3-card subsets."""
    keys = [CARD_KEY[c] for c in hand]
    s5 = [0] * (FULL + 1)
    s3 = [0] * (FULL + 1)
    for m in FIVES:
        s5[m] = key_sum_strength5(sum(keys[p] for p in range(HAND_SIZE) if m >> p & 1), wheel)
    for m in THREES:
        s3[m] = key_sum_strength3(sum(keys[p] for p in range(HAND_SIZE) if m >> p & 1))
    return s5, s3


def _other(wheel: Wheel) -> Wheel:
    return "second_highest" if wheel == "lowest" else "lowest"


@dataclass(frozen=True, slots=True)
class _Search:
    """What both searches start from: the sorted hand, each row's strength
    of every card subset, the objective's value of every front and middle,
    and the best front plus the best middle (the bound that ends a search)."""

    hand: tuple[int, ...]
    s5: list[int]
    s3: list[int]
    seg: Callable[[int, int], float]
    front_v: list[float]
    mid_v: list[float]
    bound: float


def _search(hand: tuple[int, ...] | list[int], wheel: Wheel,
            mid_full_house_bonus: int) -> _Search:
    hand = tuple(sorted(hand))
    if len(hand) != HAND_SIZE or len(set(hand)) != HAND_SIZE:
        raise ValueError(f"a hand is {HAND_SIZE} distinct cards, not {hand!r}")
    s5, s3 = _strengths(hand, wheel)
    seg = objective_for(wheel, mid_full_house_bonus).segment
    front_v = [0.0] * (FULL + 1)
    mid_v = [0.0] * (FULL + 1)
    for m in THREES:
        front_v[m] = seg(0, s3[m])
    for m in FIVES:
        mid_v[m] = seg(1, s5[m])
    bound = max(mid_v[m] for m in FIVES) + max(front_v[m] for m in THREES)
    return _Search(hand, s5, s3, seg, front_v, mid_v, bound)


def best_arrangement(
    hand: tuple[int, ...] | list[int],
    wheel: Wheel = "lowest",
    mid_full_house_bonus: int = 2,
    *,
    any_wheel: bool = False,
) -> Split:
    """The unfouled split of 13 cards with the highest objective.

    ``any_wheel``: for a player that does not know the match's ``wheel`` flag,
    keep only splits unfouled under both values (the flag only matters when
    middle and back are both straights); if there is none, the best split
    under ``wheel``."""
    search = _search(hand, wheel, mid_full_house_bonus)
    hand, s5, s3, seg = search.hand, search.s5, search.s3, search.seg
    front_v, mid_v, bound = search.front_v, search.mid_v, search.bound
    alt5 = _strengths(hand, _other(wheel))[0] if any_wheel else None
    best = -1e9
    best_split = (0, 0)
    middles = _MIDDLES
    # Strongest backs first: a back's value only grows with its strength, so
    # once even the best middle and front cannot catch up, no later back can.
    for b in sorted(FIVES, key=s5.__getitem__, reverse=True):
        vb = s5[b]
        base = seg(2, vb)
        if base + bound <= best:
            break
        rest = FULL ^ b
        for mm in middles[b]:
            vm = s5[mm]
            if vm > vb or (alt5 is not None and alt5[mm] > alt5[b]):
                continue
            f = rest ^ mm
            if s3[f] > vm:
                continue
            total = base + mid_v[mm] + front_v[f]
            if total > best:
                best = total
                best_split = (mm, b)
    if best_split == (0, 0):  # only possible with any_wheel
        return best_arrangement(hand, wheel, mid_full_house_bonus)
    return _split(hand, *best_split)


def random_valid_arrangement(
    hand: tuple[int, ...] | list[int],
    rng: random.Random,
    wheel: Wheel = "lowest",
    tries: int = 2000,
    *,
    any_wheel: bool = False,
) -> Split:
    """A uniformly random unfouled split (rejection sampling); after ``tries``
    fouled draws, the best split instead (so it never fouls). ``any_wheel``
    as for :func:`best_arrangement`."""
    hand = tuple(sorted(hand))
    wheels = (wheel, _other(wheel)) if any_wheel else (wheel,)
    for _ in range(tries):
        cards = list(hand)
        rng.shuffle(cards)
        front, middle, back = cards[:3], cards[3:8], cards[8:]
        f = key_sum_strength3(sum(CARD_KEY[c] for c in front))
        m_sum, b_sum = sum(CARD_KEY[c] for c in middle), sum(CARD_KEY[c] for c in back)
        if not any(is_fouled(f, key_sum_strength5(m_sum, w), key_sum_strength5(b_sum, w)) for w in wheels):
            return Split(tuple(sorted(front)), tuple(sorted(middle)), tuple(sorted(back)))
    return best_arrangement(hand, wheel, any_wheel=any_wheel)


@dataclass(frozen=True, slots=True)
class RankedSplit:
    """A split with the objective's expected points of each segment."""

    split: Split
    values: tuple[float, float, float]  # front, middle, back
    total: float  # their sum, as the search added them (it ranks by this)


def ranked_arrangements(
    hand: tuple[int, ...] | list[int], k: int, wheel: Wheel = "lowest", mid_full_house_bonus: int = 2
) -> list[RankedSplit]:
    """The ``k`` unfouled splits with the highest objective, best first.

    The same search, order and tie rule as :func:`best_arrangement` (a split
    found later never displaces an equal one found earlier), so the first is
    always ``best_arrangement(hand, wheel, mid_full_house_bonus)``. Gives a
    fixed, finite choice of arrangements per hand (the learning environments
    index into it)."""
    if k < 1:
        raise ValueError(f"k must be at least 1, not {k!r}")
    search = _search(hand, wheel, mid_full_house_bonus)
    hand, s5, s3, seg = search.hand, search.s5, search.s3, search.seg
    front_v, mid_v, bound = search.front_v, search.mid_v, search.bound
    # Min-heap of (total, -order, middle, back): its head is the weakest kept,
    # and among equal totals the one found last.
    kept: list[tuple[float, int, int, int]] = []
    order = 0
    for b in sorted(FIVES, key=s5.__getitem__, reverse=True):
        vb = s5[b]
        base = seg(2, vb)
        if len(kept) == k and base + bound <= kept[0][0]:
            break
        rest = FULL ^ b
        for mm in _MIDDLES[b]:
            vm = s5[mm]
            if vm > vb:
                continue
            f = rest ^ mm
            if s3[f] > vm:
                continue
            total = base + mid_v[mm] + front_v[f]
            order += 1
            if len(kept) < k:
                heapq.heappush(kept, (total, -order, mm, b))
            elif total > kept[0][0]:
                heapq.heapreplace(kept, (total, -order, mm, b))
    kept.sort(key=lambda t: (-t[0], -t[1]))
    return [RankedSplit(_split(hand, mm, b), (front_v[FULL ^ mm ^ b], mid_v[mm], seg(2, s5[b])), total)
            for total, _, mm, b in kept]
