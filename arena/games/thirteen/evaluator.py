"""Hand strength of 5-card and 3-card hands, from tables built at import.

Why our own tables and not a library: the arena's rules have a ``wheel``
flag (A-2-3-4-5 the lowest straight, or the second highest, straight flush
included) and 3-card fronts that must compare with 5-card hands on one
scale; treys and eval7 know neither. A table evaluator is also faster from
Python than both (``bench/thirteen_bench.py`` measures them side by side).

How it works. Every card has an integer key: a *rank key* in the low 23 bits
and a *suit key* above. The rank keys are chosen so that the sums of any
multiset of at most seven ranks (each rank at most four times) differ, so
the low bits of the sum of five keys name the ranks of the hand exactly. The
suit keys are powers of 6, so the high bits count the cards per suit and a
flush shows as one count of five. One dict maps "rank sum, plus a flush
offset when the suits are one" to the hand's strength: four additions, two
bit operations, one list and one dict lookup per hand.

A strength is one ``int``, higher is stronger, on the same scale for 3 and
5 cards (rules §2): ``category * 14**5`` plus the deciding ranks (rank + 1)
as base-14 digits, most significant first. A 3-card hand's ranks are a
prefix, so when every front rank is matched the 5-card hand, with kickers
left, is higher. Suits never enter a strength, so equal ranks tie.
"""

from __future__ import annotations

from collections import Counter
from enum import IntEnum
from itertools import combinations, combinations_with_replacement
from typing import Callable, Literal

from arena.games.thirteen.cards import N_CARDS, RANK_OF, RANKS, SUIT_OF

Wheel = Literal["lowest", "second_highest"]
WHEELS: tuple[Wheel, ...] = ("lowest", "second_highest")


class Category(IntEnum):
    HIGH_CARD = 0
    PAIR = 1
    TWO_PAIR = 2
    THREE_OF_A_KIND = 3
    STRAIGHT = 4
    FLUSH = 5
    FULL_HOUSE = 6
    FOUR_OF_A_KIND = 7
    STRAIGHT_FLUSH = 8

    @property
    def wire(self) -> str:
        return self.name.lower()


BASE = 14
CATEGORY_SCALE = BASE**5

# Rank keys whose multiset sums (up to seven ranks, each at most four times)
# are all distinct; tests check it for the five- and three-card sums we use.
RANK_KEYS = (0, 1, 5, 22, 98, 453, 2031, 8698, 22854, 83661, 262349, 636345, 1479181)
_RANK_BITS = 23
_RANK_MASK = (1 << _RANK_BITS) - 1
_SUIT_KEYS = (1, 6, 36, 216)  # base 6: a suit count of 5 never carries
_FLUSH_SUMS = frozenset(5 * k for k in _SUIT_KEYS)
FLUSH_OFFSET = 1 << _RANK_BITS  # beyond any rank sum

CARD_KEY: tuple[int, ...] = tuple(
    RANK_KEYS[RANK_OF[c]] | (_SUIT_KEYS[SUIT_OF[c]] << _RANK_BITS) for c in range(N_CARDS)
)
# Indexed by the suit part of a 5-card key sum: the offset of the flush entries.
_FLUSH_ADD: tuple[int, ...] = tuple(FLUSH_OFFSET if s in _FLUSH_SUMS else 0 for s in range(6**4))

_WHEEL_RANKS = (12, 3, 2, 1, 0)  # A 5 4 3 2


def strength(category: Category, ranks: tuple[int, ...]) -> int:
    value = category * CATEGORY_SCALE
    for i, r in enumerate(ranks):
        value += (r + 1) * BASE ** (4 - i)
    return value


def _straight_ranks(desc: tuple[int, ...], wheel: Wheel) -> tuple[int, ...] | None:
    """The deciding ranks of a straight, or None. ``desc`` = 5 distinct ranks, high first."""
    if desc == _WHEEL_RANKS:
        # "lowest": topped by the five. "second_highest": between K-high
        # (digits [K]) and A-high ([A]) as the digits [K, A].
        return (3,) if wheel == "lowest" else (11, 12)
    if desc[0] - desc[4] == 4:
        return (desc[0],)
    return None


def _classify(ranks: tuple[int, ...], flush: bool, wheel: Wheel) -> int:
    """The strength of a hand of 3 or 5 ``ranks`` (any order)."""
    counts = Counter(ranks)
    # Groups by (count, rank), biggest first: the deciding order of ranks.
    groups = sorted(((n, r) for r, n in counts.items()), reverse=True)
    order = tuple(r for _, r in groups)
    shape = tuple(n for n, _ in groups)
    if len(ranks) == 3:
        cat = {(3,): Category.THREE_OF_A_KIND, (2, 1): Category.PAIR}.get(shape, Category.HIGH_CARD)
        return strength(cat, order)
    if shape == (1, 1, 1, 1, 1):
        straight = _straight_ranks(order, wheel)
        if straight is not None:
            return strength(Category.STRAIGHT_FLUSH if flush else Category.STRAIGHT, straight)
        return strength(Category.FLUSH if flush else Category.HIGH_CARD, order)
    cat = {
        (4, 1): Category.FOUR_OF_A_KIND,
        (3, 2): Category.FULL_HOUSE,
        (3, 1, 1): Category.THREE_OF_A_KIND,
        (2, 2, 1): Category.TWO_PAIR,
        (2, 1, 1, 1): Category.PAIR,
    }[shape]
    return strength(cat, order)


def _five_table(wheel: Wheel) -> dict[int, int]:
    table: dict[int, int] = {}
    for ranks in combinations_with_replacement(range(13), 5):
        if max(Counter(ranks).values()) > 4:
            continue
        key = sum(RANK_KEYS[r] for r in ranks)
        table[key] = _classify(ranks, False, wheel)
        if len(set(ranks)) == 5:
            table[key + FLUSH_OFFSET] = _classify(ranks, True, wheel)
    return table


def _three_table() -> dict[int, int]:
    table: dict[int, int] = {}
    for ranks in combinations_with_replacement(range(13), 3):
        table[sum(RANK_KEYS[r] for r in ranks)] = _classify(ranks, False, "lowest")
    return table


FIVE_TABLES: dict[Wheel, dict[int, int]] = {w: _five_table(w) for w in WHEELS}
THREE_TABLE: dict[int, int] = _three_table()


def five_card_evaluator(wheel: Wheel = "lowest") -> Callable[[tuple[int, ...]], int]:
    """``eval5(keys) -> strength`` for a sequence of five ``CARD_KEY`` values.

    One sequence argument, indexed, is the quickest call shape measured from
    Python (faster than five arguments or ``sum``)."""
    table, flush_add, mask = FIVE_TABLES[wheel], _FLUSH_ADD, _RANK_MASK

    def eval5(h: tuple[int, ...]) -> int:
        s = h[0] + h[1] + h[2] + h[3] + h[4]
        return table[(s & mask) + flush_add[s >> 23]]

    return eval5


def eval3(h: tuple[int, ...]) -> int:
    """Strength of a 3-card front from three ``CARD_KEY`` values."""
    return THREE_TABLE[(h[0] + h[1] + h[2]) & _RANK_MASK]


def key_sum_strength5(key_sum: int, wheel: Wheel = "lowest") -> int:
    """Strength of a 5-card hand given the sum of its card keys."""
    return FIVE_TABLES[wheel][(key_sum & _RANK_MASK) + _FLUSH_ADD[key_sum >> _RANK_BITS]]


def key_sum_strength3(key_sum: int) -> int:
    return THREE_TABLE[key_sum & _RANK_MASK]


def hand_strength(cards: tuple[int, ...] | list[int], wheel: Wheel = "lowest") -> int:
    """Strength of 3 or 5 card indices (the convenient, slower entry)."""
    s = sum(CARD_KEY[c] for c in cards)
    if len(cards) == 5:
        return key_sum_strength5(s, wheel)
    if len(cards) == 3:
        return key_sum_strength3(s)
    raise ValueError(f"a hand has 3 or 5 cards, not {len(cards)}")


def category_of(value: int) -> Category:
    return Category(value // CATEGORY_SCALE)


def describe(value: int) -> str:
    """A short human name, e.g. "pair of K" or "straight flush, 9 high"."""
    cat = category_of(value)
    rest = value % CATEGORY_SCALE
    digits = []
    for i in range(5):
        d = rest // BASE ** (4 - i) % BASE
        if d:
            digits.append(RANKS[d - 1])
    if cat in (Category.STRAIGHT, Category.STRAIGHT_FLUSH):
        top = "5" if digits == ["5"] or digits == ["K", "A"] else digits[0]
        return f"{cat.wire.replace('_', ' ')}, {top} high"
    if cat in (Category.PAIR, Category.THREE_OF_A_KIND, Category.FOUR_OF_A_KIND):
        return f"{cat.wire.replace('_', ' ')} ({digits[0]})"
    if cat == Category.TWO_PAIR:
        return f"two pair ({digits[0]} and {digits[1]})"
    if cat == Category.FULL_HOUSE:
        return f"full house ({digits[0]} over {digits[1]})"
    return f"{cat.wire.replace('_', ' ')} ({' '.join(digits)})"


def all_three_card_counts() -> Counter[Category]:
    """Category counts over all 22,100 three-card hands (exhaustive)."""
    counts: Counter[int] = Counter()
    for hand in combinations(CARD_KEY, 3):
        counts[eval3(hand) // CATEGORY_SCALE] += 1
    return Counter({Category(k): v for k, v in counts.items()})
