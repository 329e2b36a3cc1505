"""The gauntlet's stopping rule: is the challenger separated from the field?

A gauntlet plays one challenger against a field in duplicate deck sets. Per
deck set the challenger *wins* when its primary figure (summed over the
set's rotations, turned round when less is better) beats the mean of the
field members at its table over the same matches, *loses* when below, and
the set is left out on a tie -- the same paired, assumption-free unit as the
sign test of the standings (arena/tournament/separation.py).

After each deck set, :func:`decide` runs two one-sided sequential
probability ratio tests on the share ``p`` of won sets: ``p = 1/2`` (no
difference) against ``p = 1/2 + effect`` (better) and against
``p = 1/2 - effect`` (worse). It stops with BETTER or WORSE when one
likelihood ratio reaches ``2 / alpha``, with EVEN when both have fallen to
``beta / (1 - alpha / 2)`` (no difference of ``effect`` or more is there),
and with CAPPED at ``max_sets``. Under no difference each likelihood ratio
is a martingale of mean 1, so by Ville's inequality the chance that it ever
reaches ``2 / alpha`` is at most ``alpha / 2``: the chance of declaring a
difference that is not there is at most ``alpha`` however long the run,
and stopping at the cap only lowers it (tests/tournament/test_gauntlet.py
checks this by simulation with equal bots).
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass
from typing import Any

METHOD = "two one-sided sequential probability ratio tests over duplicate deck sets"


class Verdict(str, enum.Enum):
    CONTINUE = "continue"
    BETTER = "better"  # the challenger is ahead of the field
    WORSE = "worse"
    EVEN = "even"  # no difference of the stated effect: stop playing
    CAPPED = "capped"  # max_sets played without a decision


@dataclass(frozen=True)
class StoppingRule:
    alpha: float = 0.05  # the most often a difference is declared that is not there
    beta: float = 0.2  # the most often a difference of ``effect`` is missed (before the cap)
    effect: float = 0.15  # p = 1/2 ± effect: the share of won deck sets worth detecting
    max_sets: int = 200

    def __post_init__(self) -> None:
        if not 0 < self.alpha < 1 or not 0 < self.beta < 1:
            raise ValueError("alpha and beta must be between 0 and 1")
        if not 0 < self.effect < 0.5:
            raise ValueError("effect must be between 0 and 0.5 (a share of deck sets)")
        if self.max_sets < 1:
            raise ValueError("max_sets must be at least 1")


@dataclass(frozen=True)
class Decision:
    verdict: Verdict
    wins: int
    losses: int
    sets: int  # deck sets played, ties included
    llr_better: float  # log likelihood ratios so far
    llr_worse: float
    rule: StoppingRule

    def to_wire(self) -> dict[str, Any]:
        return {"verdict": self.verdict.value, "method": METHOD, "alpha": self.rule.alpha,
                "beta": self.rule.beta, "effect": self.rule.effect,
                "max_sets": self.rule.max_sets, "deck_sets": self.sets,
                "wins": [self.wins, self.losses], "llr": [round(self.llr_better, 4),
                                                          round(self.llr_worse, 4)]}


def decide(wins: int, losses: int, ties: int, rule: StoppingRule) -> Decision:
    """The verdict after ``wins``, ``losses`` and ``ties`` deck sets."""
    up, down = 0.5 + rule.effect, 0.5 - rule.effect
    # log LR of p = up against p = 1/2 over the decided sets; "worse" mirrors it.
    llr_better = wins * math.log(up / 0.5) + losses * math.log(down / 0.5)
    llr_worse = wins * math.log(down / 0.5) + losses * math.log(up / 0.5)
    accept = math.log(2 / rule.alpha)
    reject = math.log(rule.beta / (1 - rule.alpha / 2))
    sets = wins + losses + ties
    if llr_better >= accept:
        verdict = Verdict.BETTER
    elif llr_worse >= accept:
        verdict = Verdict.WORSE
    elif llr_better <= reject and llr_worse <= reject:
        verdict = Verdict.EVEN
    elif sets >= rule.max_sets:
        verdict = Verdict.CAPPED
    else:
        verdict = Verdict.CONTINUE
    return Decision(verdict, wins, losses, sets, llr_better, llr_worse, rule)


def set_outcome(challenger: str, players: list[list[str]], figures: list[list[float]], *,
                descending: bool = True) -> int:
    """+1, -1 or 0: the challenger against the mean of the field at its
    table over one deck set's matches (``players`` and the primary
    ``figures`` per match, seat by seat)."""
    own = field = 0.0
    field_seats = 0
    for seated, values in zip(players, figures):
        for name, value in zip(seated, values):
            if name == challenger:
                own += value
            else:
                field += value
                field_seats += 1
    if field_seats == 0:
        raise ValueError(f"no field member sat with {challenger!r} in this deck set")
    own_seats = sum(row.count(challenger) for row in players)
    if own_seats == 0:
        raise ValueError(f"{challenger!r} did not play this deck set")
    gap = own / own_seats - field / field_seats
    gap = gap if descending else -gap
    return (gap > 0) - (gap < 0)
