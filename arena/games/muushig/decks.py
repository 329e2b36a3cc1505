"""Where a match's decks come from: explicit orders first, then shuffles.

Chance enters the engine only here. Explicit decks (a replay, a duplicate
tournament) are used in order; after them each deal is exactly one
``rng.shuffle`` of a fresh canonical deck, so a seed fixes the sequence of
decks whatever the players do. Explicit decks without an rng mean a replay:
running out is an error.
"""

from __future__ import annotations

import random
from typing import Any

from arena.games.base import GameError, RuleConfigError
from arena.games.muushig.cards import CARD_INDEX, deck_for


class DeckSource:
    def __init__(self, n_seats: int, rng: random.Random | None,
                 decks: list[list[str]] | None) -> None:
        self.n_seats = n_seats
        self.template = deck_for(n_seats)
        self.explicit = [self._check(i, d) for i, d in enumerate(decks or ())]
        self.used = 0
        self.rng = rng if rng is not None or decks else random.Random()

    def _check(self, i: int, deck: Any) -> tuple[int, ...]:
        want = self.template
        try:
            codes = tuple(CARD_INDEX[c] for c in deck)
        except (KeyError, TypeError):
            raise RuleConfigError(f"deck {i} holds a malformed card; cards are strings like 'AS', 'TH'") from None
        if len(codes) != len(want) or set(codes) != set(want):
            raise RuleConfigError(
                f"deck {i} is not an order of the {len(want)} cards of a {self.n_seats}-player game"
            )
        return codes

    def next(self) -> tuple[int, ...]:
        if self.used < len(self.explicit):
            deck = self.explicit[self.used]
            self.used += 1
            return deck
        if self.rng is None:
            raise GameError(f"no deck left: the match needs deal number {self.used + 1}")
        shuffled = list(self.template)
        self.rng.shuffle(shuffled)  # exactly one shuffle per deal
        self.used += 1
        return tuple(shuffled)
