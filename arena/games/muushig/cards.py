"""Cards as small integers, hands as bit masks, and the tables built on them.

A card's index is its position in the canonical order of the rules page
(suits H, S, D, C; ranks 7 8 9 T J Q K A): ``index = suit * 8 + rank``. So
within a suit a higher index is a higher card, and sorting indices sorts cards
canonically. A hand is an ``int`` with bit ``index`` set for each card held.
Wire strings (``"AS"``) exist only at the boundary.
"""

from __future__ import annotations

from typing import Final, Iterable

from arena.games.base import IllegalActionError

# Final: compiled code reads these as C constants, not from the module dict.
SUITS: Final = "HSDC"
RANKS: Final = "789TJQKA"
SUIT_NAMES: Final = ("hearts", "spades", "diamonds", "clubs")
N_CARDS: Final = 32
ACE: Final = 7  # rank index of the ace

CARD_STR: Final[tuple[str, ...]] = tuple(r + s for s in SUITS for r in RANKS)
CARD_INDEX: Final[dict[str, int]] = {c: i for i, c in enumerate(CARD_STR)}
BIT: Final[tuple[int, ...]] = tuple(1 << i for i in range(N_CARDS))

SUIT_MASK: Final[tuple[int, ...]] = tuple(0xFF << (8 * s) for s in range(4))
ACE_MASK: Final = sum(BIT[s * 8 + ACE] for s in range(4))
# ABOVE[c]: the cards of c's suit that beat c.
ABOVE: Final[tuple[int, ...]] = tuple(SUIT_MASK[c >> 3] & ~((1 << (c + 1)) - 1) for c in range(N_CARDS))


def _lead_block(aces: int) -> int:
    """Cards a leader may not lead when holding the aces in ``aces``:
    every non-ace card of a suit whose ace is held (rules §7.2)."""
    block = 0
    for s in range(4):
        ace = BIT[s * 8 + ACE]
        if aces & ace:
            block |= SUIT_MASK[s] & ~ace
    return block


# Keyed by ``hand & ACE_MASK`` (16 possible values).
LEAD_BLOCK: Final[dict[int, int]] = {}
for _pattern in range(16):
    _aces = sum(BIT[s * 8 + ACE] for s in range(4) if _pattern >> s & 1)
    LEAD_BLOCK[_aces] = _lead_block(_aces)

# Byte tables turn a mask into its card indices (ascending) with four lookups.
_BYTE_CARDS: Final[tuple[tuple[tuple[int, ...], ...], ...]] = tuple(
    tuple(tuple(8 * k + i for i in range(8) if b >> i & 1) for b in range(256)) for k in range(4)
)
_B0: Final = _BYTE_CARDS[0]
_B1: Final = _BYTE_CARDS[1]
_B2: Final = _BYTE_CARDS[2]
_B3: Final = _BYTE_CARDS[3]


def mask_cards(mask: int) -> tuple[int, ...]:
    """The card indices of ``mask`` in canonical order."""
    return _B0[mask & 255] + _B1[(mask >> 8) & 255] + _B2[(mask >> 16) & 255] + _B3[mask >> 24]


# The same tables in wire strings: a hand's strings without a loop per card.
BYTE_STRS: Final[tuple[tuple[tuple[str, ...], ...], ...]] = tuple(
    tuple(tuple(CARD_STR[c] for c in cards) for cards in table) for table in _BYTE_CARDS
)
_S0: Final = BYTE_STRS[0]
_S1: Final = BYTE_STRS[1]
_S2: Final = BYTE_STRS[2]
_S3: Final = BYTE_STRS[3]


def mask_strs(mask: int) -> list[str]:
    """Wire strings of ``mask`` in canonical order (a new list)."""
    return list(_S0[mask & 255] + _S1[(mask >> 8) & 255] + _S2[(mask >> 16) & 255] + _S3[mask >> 24])


def deck_for(players: int) -> tuple[int, ...]:
    """The canonical deck for ``players`` seats (rules, Variants: fewer
    players remove the lowest ranks: 4 → no 7s, 3 → no 7s/8s, 2 → no 9s too)."""
    low = {5: 0, 4: 1, 3: 2, 2: 3}[players]
    return tuple(c for c in range(N_CARDS) if (c & 7) >= low)


def parse_card(value: object) -> int:
    """The index of a wire card, or IllegalActionError saying what is wrong."""
    if isinstance(value, str):
        idx = CARD_INDEX.get(value)
        if idx is not None:
            return idx
    raise IllegalActionError(
        f"malformed card {value!r}: a card is a rank (7 8 9 T J Q K A) then a suit "
        f"(H S D C), e.g. 'AS' or 'TH'"
    )


def join_cards(cards: Iterable[int]) -> str:
    return ", ".join(CARD_STR[c] for c in cards)
