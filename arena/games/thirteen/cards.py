"""The 52 cards as small integers, and their wire strings.

A card's index is its place in the canonical order of the rules page:
suits H, S, D, C, and within a suit the ranks 2 3 4 5 6 7 8 9 T J Q K A, so
``index = suit * 13 + rank`` and sorting indices sorts cards canonically.
Wire strings (``"AS"``, ``"TH"``) exist only at the boundary.
"""

from __future__ import annotations

from collections.abc import Iterable

from arena.games.base import IllegalActionError

SUITS = "HSDC"
RANKS = "23456789TJQKA"
N_CARDS = 52
HAND_SIZE = 13
DEALT_HANDS = 4  # rules §1.2: the deck is always dealt as four hands

CARD_STR: tuple[str, ...] = tuple(r + s for s in SUITS for r in RANKS)
CARD_INDEX: dict[str, int] = {c: i for i, c in enumerate(CARD_STR)}
DECK: tuple[int, ...] = tuple(range(N_CARDS))

RANK_OF: tuple[int, ...] = tuple(i % 13 for i in range(N_CARDS))
SUIT_OF: tuple[int, ...] = tuple(i // 13 for i in range(N_CARDS))


def parse_card(value: object) -> int:
    """The index of a wire card, or IllegalActionError saying what is wrong."""
    if isinstance(value, str):
        idx = CARD_INDEX.get(value)
        if idx is not None:
            return idx
    raise IllegalActionError(
        f"malformed card {value!r}: a card is a rank (2 3 4 5 6 7 8 9 T J Q K A) then a suit "
        f"(H S D C), e.g. 'AS' or 'TH'"
    )


def card_strs(cards: Iterable[int]) -> list[str]:
    """Wire strings in canonical order."""
    return [CARD_STR[c] for c in sorted(cards)]


def join_cards(cards: Iterable[int]) -> str:
    return " ".join(card_strs(cards))


def deal_hands(deck: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """Rules §1.2: card i goes to hand i mod 4; each hand in canonical order."""
    return tuple(tuple(sorted(deck[h::DEALT_HANDS])) for h in range(DEALT_HANDS))

# Protocol §5.3 constraints: the size of each row of an arrangement.
SEGMENT_SIZES: dict[str, int] = {"front": 3, "middle": 5, "back": 5}
