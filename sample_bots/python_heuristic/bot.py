"""A Muushig Arena bot with a simple, sensible heuristic.

It works from the request's ``state`` alone (no memory between requests):

* Muushig rewards tricks (each one lowers your score) and punishes entering
  and taking none (+5), so it enters only when its cards promise about a
  trick -- more readily when others have already folded.
* It exchanges away low off-suit cards, keeping trumps, aces and kings.
* As dealer it takes the face-up trump in place of its weakest card.
* In play it wins a trick with the cheapest card that wins it, leads its
  strongest card, and throws its weakest card when it cannot win.

    python sample_bots/python_heuristic/bot.py --host 127.0.0.1 --port 7000 --token T --name N
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

try:
    from protocol.sdk import run_bot
except ImportError:  # run from a checkout without installing the project
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from protocol.sdk import run_bot

RANKS = "789TJQKA"
# Rough chance that a card wins a trick, by rank, as trump and off trump.
TRUMP_VALUE = {"A": 1.0, "K": 0.85, "Q": 0.7, "J": 0.6, "T": 0.5, "9": 0.4, "8": 0.35, "7": 0.3}
PLAIN_VALUE = {"A": 0.8, "K": 0.45, "Q": 0.2, "J": 0.1, "T": 0.05, "9": 0.03, "8": 0.02, "7": 0.01}
ENTER_THRESHOLD = 1.0


def rank(card: str) -> int:
    return RANKS.index(card[0])


def suit(card: str) -> str:
    return card[1]


def trump_suit(state: dict[str, Any]) -> str | None:
    """The trump suit, whether the state gives it as a suit or as a card."""
    trump = state.get("trump")
    if isinstance(trump, str) and len(trump) in (1, 2):
        return trump[-1]
    face_up = state.get("face_up")
    return face_up[1] if isinstance(face_up, str) and len(face_up) == 2 else None


def value(card: str, trump: str | None) -> float:
    table = TRUMP_VALUE if suit(card) == trump else PLAIN_VALUE
    return table[card[0]]


def beats(card: str, best: str, led: str, trump: str | None) -> bool:
    """Whether ``card`` would take the trick from ``best`` (rules §7.4)."""
    if suit(card) == trump:
        return suit(best) != trump or rank(card) > rank(best)
    return suit(card) == led and suit(best) == led and rank(card) > rank(best)


def decide(legal: list, state: dict[str, Any]) -> str:
    trump = trump_suit(state)
    cards = state.get("cards") or []
    promise = sum(value(card, trump) for card in cards)
    if state.get("dealer") == state.get("seat") and isinstance(state.get("face_up"), str):
        promise += 0.5 * value(state["face_up"], trump)  # the dealer may take it
    folded = sum(1 for status in state.get("status") or [] if status == "folded")
    promise *= 1 + 0.15 * folded  # fewer opponents, more tricks to go round
    return "enter" if promise >= ENTER_THRESHOLD and "enter" in legal else "fold"


def exchange(legal: list, state: dict[str, Any]) -> list:
    trump = trump_suit(state)
    weak = {card for card in state.get("cards") or [] if suit(card) != trump and card[0] not in "AK"}
    # The biggest allowed discard made only of weak cards, weakest first.
    candidates = [option for option in legal if set(option) <= weak]
    return max(candidates, key=lambda option: (len(option), -sum(value(c, trump) for c in option)), default=legal[0])


def take(legal: list, state: dict[str, Any]) -> str | None:
    trump = trump_suit(state)
    face_up = state.get("face_up")
    cards = [card for card in legal if card is not None]
    if not cards or not isinstance(face_up, str):
        return None
    weakest = min(cards, key=lambda card: value(card, trump))
    return weakest if value(weakest, trump) < value(face_up, trump) else None


def play(legal: list, state: dict[str, Any]) -> str:
    trump = trump_suit(state)
    trick = [card for _, card in state.get("trick") or []]
    if not trick:
        return max(legal, key=lambda card: (value(card, trump), rank(card)))
    led = suit(trick[0])
    best = trick[0]
    for card in trick[1:]:
        if beats(card, best, led, trump):
            best = card
    winners = [card for card in legal if beats(card, best, led, trump)]
    if winners:
        return min(winners, key=lambda card: (value(card, trump), rank(card)))
    return min(legal, key=lambda card: (value(card, trump), rank(card)))


PHASES = {"decide": decide, "exchange": exchange, "take": take, "play": play}


def choose(phase: str, legal: list, state: dict[str, Any]) -> Any:
    handler = PHASES.get(phase)
    return handler(legal, state) if handler else legal[0]


if __name__ == "__main__":
    run_bot(choose, argv=sys.argv[1:])
