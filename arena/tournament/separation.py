"""Is a bot really better than the next one in the standings yet?

Pure statistics over finished matches, using the duplicate structure: the
unit of comparison is a **deck set** -- every match dealt from the same
table label (``MatchRecord.seed``: all duplicate rotations of a table), or
the match alone when it has none. For two neighbours A and B and each deck
set in which both played, the paired difference is A's primary figure minus
B's (the first ranking key the game describes, arena.tournament.ranking:
stars for Muushig, points for thirteen; turned round when less is better)
summed over those matches: both met the same cards, so the luck of the deal
cancels out.

Test: a two-sided **sign test** over the deck sets whose difference is not
zero (exact binomial, p < ``ALPHA``). It assumes nothing about the size of
the differences, only that deck sets are independent -- they are, each has
its own decks.

``more_matches``: how many more matches (in whole deck sets) would make the
sign test significant *if the share of deck sets A wins stays as observed*
(so roughly a coin flip whether that many are enough); ``None`` when the
observed share is exactly one half (no sign of a difference) or the estimate
exceeds ``MAX_ESTIMATE_SETS`` deck sets.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from arena.storage.base import MatchRecord
from arena.tournament.ranking import ranking_for

ALPHA = 0.05
METHOD = "sign test over duplicate deck sets"
MAX_ESTIMATE_SETS = 100_000


@dataclass(frozen=True)
class Separation:
    significant: bool
    p_value: float
    method: str
    more_matches: int | None
    deck_sets: int  # deck sets both played
    a_better: int  # deck sets where the higher-ranked bot did better on the primary figure
    b_better: int

    def to_wire(self) -> dict[str, Any]:
        return {"significant": self.significant, "p_value": round(self.p_value, 6),
                "method": self.method, "more_matches": self.more_matches,
                "deck_sets": self.deck_sets, "wins": [self.a_better, self.b_better]}


def sign_test_p(wins: int, losses: int) -> float:
    """Two-sided exact sign test: P(a split at least this uneven | p = 1/2)."""
    n = wins + losses
    if n == 0:
        return 1.0
    k = min(wins, losses)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n
    return min(1.0, 2 * tail)


def _sets_needed(share: float) -> int | None:
    """Smallest number of non-tied deck sets at which the observed ``share``
    of wins gives p < ALPHA."""
    if share == 0.5:
        return None
    lead = max(share, 1 - share)
    n = 1
    while n <= MAX_ESTIMATE_SETS:
        wins = round(lead * n)
        if sign_test_p(wins, n - wins) < ALPHA:
            return n
        # Grow fast far from the answer: p falls roughly geometrically in n.
        n = n + 1 if n < 64 else int(n * 1.05) + 1
    return None


def deck_set(match: MatchRecord) -> tuple[str | None, str]:
    return (match.tournament_id, match.seed if match.seed is not None else f"match:{match.id}")


def compare(a: str, b: str, matches: Sequence[MatchRecord]) -> Separation:
    """Compare bot ``a`` (ranked higher) with ``b`` over ``matches``."""
    diff: dict[tuple[str | None, str], int] = defaultdict(int)
    size: dict[tuple[str | None, str], int] = defaultdict(int)
    for match in matches:
        if match.result is None or a not in match.players or b not in match.players:
            continue
        primary = ranking_for(match.game).primary
        figure = match.result.get(primary.key) or []
        if len(figure) != len(match.players):
            continue
        key = deck_set(match)
        gap = (sum(s for p, s in zip(match.players, figure) if p == a)
               - sum(s for p, s in zip(match.players, figure) if p == b))
        diff[key] += gap if primary.descending else -gap
        size[key] += 1
    wins = sum(1 for d in diff.values() if d > 0)
    losses = sum(1 for d in diff.values() if d < 0)
    sets = len(diff)
    p = sign_test_p(wins, losses)
    significant = p < ALPHA
    more: int | None
    if significant:
        more = 0
    elif wins + losses == 0:
        more = None
    else:
        needed = _sets_needed(wins / (wins + losses))
        if needed is None:
            more = None
        else:
            untied = (wins + losses) / sets  # share of deck sets that decide
            per_set = sum(size.values()) / sets  # matches per deck set
            extra_sets = max(1, math.ceil(needed / untied) - sets)
            more = math.ceil(extra_sets * per_set)
    return Separation(significant=significant, p_value=p, method=METHOD, more_matches=more,
                      deck_sets=sets, a_better=wins, b_better=losses)


def neighbour_separations(order: Sequence[str],
                          matches: Iterable[MatchRecord]) -> list[Separation | None]:
    """For each bot in standings ``order``: its comparison with the next one
    (None on the last)."""
    matches = list(matches)
    return [compare(a, b, matches) for a, b in zip(order, order[1:])] + [None] * bool(order)
