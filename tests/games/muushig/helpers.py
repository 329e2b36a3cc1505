"""Building Muushig positions by hand for rule tests.

``deck_for_hands`` lays out a deck so that the deal (rules §3) gives each
named seat exactly the named cards; ``table`` then walks the decisions,
exchanges and take so a test starts right at the first trick.
"""

from __future__ import annotations

import random
from typing import Any

from hypothesis import strategies as st

from arena.games.muushig import MuushigEngine

# Every variant of the rules (rules page, Variants), for property tests.
RULES = st.fixed_dictionaries(
    {},
    optional={
        "max_hands": st.integers(1, 12),
        "players": st.integers(2, 5),
        "last_two_forced": st.booleans(),
        "auto_enter_after_folds": st.integers(0, 3),
        "trump_ace_first_lead": st.booleans(),
    },
)

RANKS = "789TJQKA"
SUITS = "HSDC"


def all_cards(players: int = 5) -> list[str]:
    removed = {5: "", 4: "7", 3: "78", 2: "789"}[players]
    return [r + s for s in SUITS for r in RANKS if r not in removed]


def deck_for_hands(
    hands: dict[int, str], face_up: str, stock: str = "", dealer: int = 0, players: int = 5
) -> list[str]:
    """A deck order dealing ``hands`` (seat -> "AS KS 7H ...") with ``face_up``
    turned and ``stock`` on top of the stock; unnamed cards fill the rest in
    canonical order."""
    named = {s: h.split() for s, h in hands.items()}
    used = [c for h in named.values() for c in h] + [face_up] + stock.split()
    assert len(set(used)) == len(used), f"a card is named twice: {used}"
    spare = [c for c in all_cards(players) if c not in used]
    n = players
    deck: list[str | None] = [None] * len(all_cards(players))
    for seat in range(n):
        cards = named.get(seat) or [spare.pop(0) for _ in range(5)]
        assert len(cards) == 5, f"seat {seat} needs 5 cards"
        j = (seat - dealer - 1) % n
        for k, c in enumerate(cards):
            deck[j + k * n] = c
    deck[5 * n] = face_up
    rest = stock.split() + spare
    for i in range(5 * n + 1, len(deck)):
        deck[i] = rest.pop(0)
    return deck  # type: ignore[return-value]


def engine_with(decks: list[list[str]], rules: dict[str, Any] | None = None, seed: int = 0) -> tuple[MuushigEngine, list]:
    """A started engine dealing ``decks`` first, then seeded shuffles."""
    engine = MuushigEngine(rules, random.Random(seed), decks)
    return engine, engine.start()


def act(engine: MuushigEngine, *actions: Any) -> list:
    events: list = []
    for a in actions:
        events += engine.play(a)
    return events


def records(events: list) -> list[dict[str, Any]]:
    return [e.for_record() for e in events]


def kinds(events: list) -> list[str]:
    return [e.kind for e in events]


def of_kind(events: list, kind: str) -> list[dict[str, Any]]:
    return [e.for_record() for e in events if e.kind == kind]


def table(
    hands: dict[int, str],
    face_up: str,
    entered: set[int],
    rules: dict[str, Any] | None = None,
    stock: str = "",
) -> tuple[MuushigEngine, list]:
    """Dealer 0, ``entered`` seats enter, the others fold; nobody exchanges;
    an entered dealer declines the take. Returns the engine at the first
    trick and every event so far."""
    engine, events = engine_with([deck_for_hands(hands, face_up, stock)], rules)
    while engine.phase is not None and engine.phase != "play":
        seat, phase = engine.current_seat, engine.phase
        if phase == "decide":
            events += engine.play("enter" if seat in entered else "fold")
        elif phase == "exchange":
            events += engine.play([])
        else:
            events += engine.play(None)
    return engine, events


def set_scores(engine: MuushigEngine, scores: list[int]) -> None:
    """Test-only: start a position late in a round without playing it out."""
    engine._scores[:] = scores


def random_match_events(rules: dict[str, Any] | None, seed: int) -> list:
    """Every event of a whole match played by random legal actions."""
    engine = MuushigEngine(rules, random.Random(seed))
    events = engine.start()
    choice = random.Random(seed + 1).choice
    while not engine.finished:
        events += engine.play(choice(engine.legal_actions()))
    return events
