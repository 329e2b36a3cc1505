"""Building thirteen-card positions by hand for rule tests."""

from __future__ import annotations

from arena.games.thirteen.cards import CARD_INDEX, CARD_STR
from arena.games.thirteen.evaluator import Wheel, hand_strength
from arena.games.thirteen.scoring import SeatHands


def cards(text: str) -> list[int]:
    return [CARD_INDEX[c] for c in text.split()]


def value(text: str, wheel: Wheel = "lowest") -> int:
    """Strength of a 3- or 5-card hand written like "AS KS QS JS TS"."""
    return hand_strength(cards(text), wheel)


def seat(front: str, middle: str, back: str, wheel: Wheel = "lowest") -> SeatHands:
    return SeatHands(value(front, wheel), value(middle, wheel), value(back, wheel))


def arrangement(front: str, middle: str, back: str) -> dict[str, list[str]]:
    return {"front": front.split(), "middle": middle.split(), "back": back.split()}


def deck_for_hands(hands: dict[int, str]) -> list[str]:
    """A deck order giving each named hand (0-3, 13 cards) exactly its cards
    (card i goes to hand i mod 4); unnamed hands get the spare cards."""
    named = {h: t.split() for h, t in hands.items()}
    used = [c for t in named.values() for c in t]
    assert len(set(used)) == len(used), f"a card is named twice: {used}"
    spare = [c for c in CARD_STR if c not in used]
    deck: list[str] = [""] * 52
    for h in range(4):
        row = named.get(h) or [spare.pop(0) for _ in range(13)]
        assert len(row) == 13, f"hand {h} needs 13 cards"
        for k, c in enumerate(row):
            deck[4 * k + h] = c
    return deck
