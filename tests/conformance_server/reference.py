"""What a bot author can compute from the rules page alone.

Independent of the arena's engine on purpose: these few functions are the
yardstick the server's messages are measured with (canonical order, the
legal answers of each phase, trick winners, the deal of a revealed deck,
commitments, sport-style ranks).
"""

from __future__ import annotations

import hashlib
import itertools
from typing import Any, Sequence

RANKS = "789TJQKA"
SUITS = "HSDC"
DECK = [rank + suit for suit in SUITS for rank in RANKS]  # canonical order
CANONICAL = {card: index for index, card in enumerate(DECK)}
SEATS = 5
START_SCORE = 15


def canonical(cards: Sequence[str]) -> list[str]:
    return sorted(cards, key=CANONICAL.__getitem__)


def rank(card: str) -> int:
    return RANKS.index(card[0])


def exchange_sets(hand: Sequence[str], stock: int) -> list[list[str]]:
    """Protocol §3: every discard of 0..min(5, stock) cards, each sorted
    canonically, ordered by size and then card by card."""
    ordered = canonical(hand)
    sets: list[list[str]] = []
    for size in range(min(5, stock, len(ordered)) + 1):
        sets.extend(list(combo) for combo in itertools.combinations(ordered, size))
    return sets


def take_answers(hand: Sequence[str]) -> list[str | None]:
    return [None, *canonical(hand)]


def playable(hand: Sequence[str], trick: Sequence[Sequence[Any]], trump: str) -> list[str]:
    """Rules §7.2-7.3 (no variants), canonical order."""
    hand = canonical(hand)
    if not trick:
        aces = {card[1] for card in hand if card[0] == "A"}
        return [card for card in hand if card[1] not in aces or card[0] == "A"]
    led = trick[0][1][1]
    played = [card for _, card in trick]
    trumps_played = [rank(c) for c in played if c[1] == trump]
    follow = [c for c in hand if c[1] == led]
    if follow:
        if led != trump and trumps_played:
            return follow
        top = max(rank(c) for c in played if c[1] == led)
        higher = [c for c in follow if rank(c) > top]
        return higher or follow
    trumps = [c for c in hand if c[1] == trump]
    if trumps:
        if trumps_played:
            over = [c for c in trumps if rank(c) > max(trumps_played)]
            return over or trumps
        return trumps
    return hand


def trick_winner(cards: Sequence[Sequence[Any]], trump: str) -> int:
    """Rules §7.4: the highest trump, else the highest card of the led suit."""
    led = cards[0][1][1]
    trumps = [(rank(card), seat) for seat, card in cards if card[1] == trump]
    if trumps:
        return max(trumps)[1]
    return max((rank(card), seat) for seat, card in cards if card[1] == led)[1]


def dealt_to(deck: Sequence[str], dealer: int, seat: int) -> list[str]:
    """Rules §3.2: card i of deck[0..24] goes to seat (dealer + 1 + i) mod 5."""
    return [deck[i] for i in range(25) if (dealer + 1 + i) % SEATS == seat]


def commitment(salt: str, deck: Sequence[str]) -> str:
    """Protocol §5: lowercase hex SHA-256 of salt + ":" + deck joined by ","."""
    return hashlib.sha256((salt + ":" + ",".join(deck)).encode("utf-8")).hexdigest()


def sport_ranks(stars: Sequence[int], sums: Sequence[int]) -> list[int]:
    """Rules §9.2 / protocol §6: more stars, then lower sum; ties share a place."""
    keys = [(-s, t) for s, t in zip(stars, sums)]
    return [1 + sum(1 for other in keys if other < key) for key in keys]
