"""The wire face of an arrangement (protocol §5.3–5.4): the constraints a
request carries and the check of a bot's answer, with reasons a bot author
can act on (wrong count, a card not in hand, a card twice, a foul under
``foul_policy = reject``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from arena.games.base import IllegalActionError
from arena.games.thirteen.arranger import Split
from arena.games.thirteen.cards import SEGMENT_SIZES, join_cards, parse_card
from arena.games.thirteen.evaluator import CARD_KEY, Wheel, describe, key_sum_strength3, key_sum_strength5
from arena.games.thirteen.scoring import SEGMENTS, SeatHands

CONSTRAINTS: dict[str, int] = dict(SEGMENT_SIZES)

_SHAPE = '{"front": [3 cards], "middle": [5 cards], "back": [5 cards]}'


def seat_hands(split: Split, wheel: Wheel) -> SeatHands:
    return SeatHands(
        key_sum_strength3(sum(CARD_KEY[c] for c in split.front)),
        key_sum_strength5(sum(CARD_KEY[c] for c in split.middle), wheel),
        key_sum_strength5(sum(CARD_KEY[c] for c in split.back), wheel),
    )


def check_arrangement(action: Any, hand: tuple[int, ...], wheel: Wheel, *, reject_fouls: bool) -> Split:
    """The arrangement ``action`` of ``hand`` as a Split, or IllegalActionError."""
    if not isinstance(action, Mapping):
        raise IllegalActionError(f"an arrangement is an object {_SHAPE}, not {type(action).__name__}")
    extra = sorted(str(k) for k in action if k not in CONSTRAINTS)
    if extra:
        raise IllegalActionError(f"unknown key(s) {', '.join(extra)} in the arrangement; it is {_SHAPE}")
    held = set(hand)
    seen: set[int] = set()
    rows: dict[str, tuple[int, ...]] = {}
    for segment, size in CONSTRAINTS.items():
        row = action.get(segment)
        if row is None:
            raise IllegalActionError(f"the arrangement has no {segment}; it is {_SHAPE}")
        if not isinstance(row, (list, tuple)):
            raise IllegalActionError(f"{segment} must be a list of {size} cards, not {row!r}")
        if len(row) != size:
            raise IllegalActionError(f"{segment} must hold {size} cards, not {len(row)}")
        cards = []
        for value in row:
            card = parse_card(value)
            if card not in held:
                raise IllegalActionError(
                    f"not a card in your hand: {join_cards([card])} in the {segment} (you hold {join_cards(hand)})"
                )
            if card in seen:
                raise IllegalActionError(f"card listed twice in the arrangement: {join_cards([card])}")
            seen.add(card)
            cards.append(card)
        rows[segment] = tuple(sorted(cards))
    split = Split(rows["front"], rows["middle"], rows["back"])
    if reject_fouls:
        values = seat_hands(split, wheel).values
        for i in range(2):
            if values[i] > values[i + 1]:
                raise IllegalActionError(
                    f"fouled: the {SEGMENTS[i]} ({describe(values[i])}) is stronger than the "
                    f"{SEGMENTS[i + 1]} ({describe(values[i + 1])}); rows must satisfy front <= middle <= back"
                )
    return split
