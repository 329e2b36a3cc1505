"""A thirteen-card (Chinese poker) bot for the arena, on the Python SDK.

    python sample_bots/python_thirteen/bot.py --host 127.0.0.1 --port 7000 --token T --name N

(or set ARENA_HOST, ARENA_PORT, ARENA_TOKEN, ARENA_NAME).

Strategy, greedy and never fouled: the back is the strongest five cards of
the thirteen, the middle the strongest five of the eight left, the front
the last three. (The middle is at least as strong as any five of those eight
cards that contain the front, and such a hand is never below the front; the
back is the best five of all, so the order always holds.)
"""

from __future__ import annotations

import sys
from collections import Counter
from itertools import combinations
from pathlib import Path
from typing import Any

try:
    from protocol.sdk import run_bot
except ImportError:  # run from a checkout without installing the project
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from protocol.sdk import run_bot

RANKS = "23456789TJQKA"
HIGH, PAIR, TWO_PAIR, TRIPS, STRAIGHT, FLUSH, FULL_HOUSE, QUADS, STRAIGHT_FLUSH = range(9)

# match_start.rules of the latest match (the "wheel" flag changes the order).
RULES: dict[str, Any] = {}


def strength(cards: list[str], wheel: str = "lowest") -> tuple[int, ...]:
    """(category, deciding ranks...): compare with <. A 3-card front's tuple
    is shorter, so a 5-card hand that matches it and has kickers left is higher."""
    counts = Counter(RANKS.index(c[0]) for c in cards)
    groups = sorted(((n, r) for r, n in counts.items()), reverse=True)
    order = tuple(r for _, r in groups)
    shape = tuple(n for n, _ in groups)
    if len(cards) == 3:
        return ({(3,): TRIPS, (2, 1): PAIR}.get(shape, HIGH), *order)
    flush = len({c[1] for c in cards}) == 1
    if shape == (1, 1, 1, 1, 1):
        straight: tuple[int, ...] | None = None
        if order == (12, 3, 2, 1, 0):  # A-2-3-4-5
            straight = (3,) if wheel == "lowest" else (11, 12)
        elif order[0] - order[4] == 4:
            straight = (order[0],)
        if straight is not None:
            return (STRAIGHT_FLUSH if flush else STRAIGHT, *straight)
        return (FLUSH if flush else HIGH, *order)
    cat = {(4, 1): QUADS, (3, 2): FULL_HOUSE, (3, 1, 1): TRIPS, (2, 2, 1): TWO_PAIR}.get(shape, PAIR)
    return (cat, *order)


def best_five(cards: list[str], wheel: str) -> list[str]:
    return list(max(combinations(cards, 5), key=lambda five: strength(list(five), wheel)))


def play(phase: str, options: Any, state: dict[str, Any]) -> Any:
    """``options`` is the request's constraints: {"front": 3, "middle": 5, "back": 5}."""
    wheel = RULES.get("wheel", "lowest")
    cards = list(state["cards"])
    back = best_five(cards, wheel)
    rest = [c for c in cards if c not in back]
    middle = best_five(rest, wheel)
    front = [c for c in rest if c not in middle]
    return {"front": front, "middle": middle, "back": back}


def remember_rules(info: Any) -> None:
    RULES.clear()
    RULES.update(info.rules or {})


if __name__ == "__main__":
    run_bot(play, argv=sys.argv[1:], game="thirteen", on_match_start=remember_rules)
