"""House bots: they fill empty seats and take over dropped ones.

Each is a ``HouseBot``: ``(phase, legal, state) -> action`` over exactly what
a remote bot receives (the request's ``legal`` and ``state``), so a house bot
can never use hidden information. Factories take their own ``random.Random``.

In Muushig you *want* tricks: each trick lowers your score by one, and an
entered seat that takes none gets +5. The heuristic bot enters when its hand
should take a trick, keeps trumps and aces, and wins tricks when it can.
"""

from __future__ import annotations

import random
from typing import Any

from arena.games.base import HouseBot

RANKS = "789TJQKA"

# Rough chance that a card takes a trick, by rank 7..A.
_TRUMP_VALUE = (0.3, 0.35, 0.4, 0.5, 0.6, 0.75, 0.9, 1.0)
_SIDE_VALUE = (0.0, 0.0, 0.0, 0.0, 0.05, 0.1, 0.35, 0.75)
ENTER_THRESHOLD = 0.9


def _rank(card: str) -> int:
    return RANKS.index(card[0])


def _value(card: str, trump: str) -> float:
    r = _rank(card)
    return _TRUMP_VALUE[r] if card[1] == trump else _SIDE_VALUE[r]


def _keep_order(card: str, trump: str) -> tuple[int, int]:
    """Sort key: the first cards are the cheapest to give away."""
    return (1 if card[1] == trump else 0, _rank(card) + (8 if _rank(card) == 7 else 0))


def make_random(rng: random.Random) -> HouseBot:
    """Uniform over the legal answers."""

    def bot(phase: str, legal: list[Any], state: dict[str, Any]) -> Any:
        return rng.choice(legal)

    return bot


def _beats(card: str, best: str, trump: str) -> bool:
    if card[1] == best[1]:
        return _rank(card) > _rank(best)
    # ``best`` is of the led suit or a trump, so another suit wins only as a trump.
    return card[1] == trump


def _winning_card(trick: list[list[Any]], trump: str) -> str:
    best = trick[0][1]
    for _, card in trick[1:]:
        if _beats(card, best, trump):
            best = card
    return best


def make_heuristic(rng: random.Random) -> HouseBot:
    """Enters with tricks in hand, exchanges its weak side cards, takes the
    face-up trump, wins tricks when it can and dumps cheap cards otherwise."""

    def decide(state: dict[str, Any]) -> str:
        trump = state["trump"]
        strength = sum(_value(c, trump) for c in state["cards"])
        entered = sum(1 for s in state["status"] if s == "entered")
        # More rivals already in means more cards above ours; the dealer also
        # gets the face-up trump.
        need = ENTER_THRESHOLD + 0.1 * max(0, entered - 1)
        if state["seat"] == state["dealer"]:
            strength += 0.3
        return "enter" if strength >= need else "fold"

    def exchange(legal: list[list[str]], state: dict[str, Any]) -> list[str]:
        trump = state["trump"]
        limit = max(len(s) for s in legal)
        weak = [c for c in state["cards"] if c[1] != trump and _rank(c) < 6]
        weak.sort(key=lambda c: _keep_order(c, trump))
        return weak[:limit]

    def take(legal: list[Any], state: dict[str, Any]) -> str | None:
        trump = state["trump"]
        cards = [c for c in legal if c is not None]
        worst = min(cards, key=lambda c: _keep_order(c, trump))
        if _keep_order(worst, trump) < _keep_order(state["face_up"], trump):
            return worst
        return None

    def play(legal: list[str], state: dict[str, Any]) -> str:
        trump = state["trump"]
        trick = state["trick"]
        cheap = min(legal, key=lambda c: _keep_order(c, trump))
        if not trick:
            aces = [c for c in legal if _rank(c) == 7 and c[1] != trump]
            if aces:
                return aces[0]
            trumps = sorted((c for c in legal if c[1] == trump), key=_rank)
            if trumps and _rank(trumps[-1]) >= 6:
                return trumps[-1]
            return cheap
        best = _winning_card(trick, trump)
        winners = sorted((c for c in legal if _beats(c, best, trump)), key=_rank)
        if not winners:
            return cheap
        still_to_play = sum(1 for s in state["status"] if s == "entered") - len(trick) - 1
        return winners[0] if still_to_play == 0 else winners[-1]

    def bot(phase: str, legal: list[Any], state: dict[str, Any]) -> Any:
        if phase == "decide":
            return decide(state)
        if phase == "exchange":
            return exchange(legal, state)
        if phase == "take":
            return take(legal, state)
        return play(legal, state)

    return bot


HOUSE_BOTS = {"random": make_random, "heuristic": make_heuristic}
