"""The gauntlet's stopping rule (arena/tournament/gauntlet.py): it declares a
difference between equal bots at most as often as it states, checked by
simulating many seeded gauntlets, and finds a real difference."""

from __future__ import annotations

import random

import pytest

from arena.tournament.gauntlet import StoppingRule, Verdict, decide, set_outcome

SEATS = 5
POINTS = (4, 3, 2, 1, 0)


def deck_set(skill_gap: float, rng: random.Random) -> int:
    """One duplicate deck set: the challenger (skill ``skill_gap``) and four
    field members (skill 0), five rotations on the same decks."""
    names = ["challenger", "f1", "f2", "f3", "f4"]
    skill = {"challenger": skill_gap, "f1": 0.0, "f2": 0.0, "f3": 0.0, "f4": 0.0}
    luck = [rng.gauss(0.0, 1.0) for _ in range(SEATS)]
    players, figures = [], []
    for r in range(SEATS):
        seated = [names[(s + r) % SEATS] for s in range(SEATS)]
        showing = [skill[p] + luck[s] + rng.gauss(0.0, 1.5) for s, p in enumerate(seated)]
        order = sorted(range(SEATS), key=lambda s: -showing[s])
        points = [0] * SEATS
        for place, s in enumerate(order):
            points[s] = POINTS[place]
        players.append(seated)
        figures.append(points)
    return set_outcome("challenger", players, figures)


def run(skill_gap: float, rule: StoppingRule, seed: int) -> Verdict:
    rng = random.Random(seed)
    counts = {1: 0, -1: 0, 0: 0}
    while True:
        counts[deck_set(skill_gap, rng)] += 1
        decision = decide(counts[1], counts[-1], counts[0], rule)
        if decision.verdict is not Verdict.CONTINUE:
            return decision.verdict


def test_equal_bots_are_declared_different_at_most_alpha_of_the_time():
    rule = StoppingRule(alpha=0.05, max_sets=200)
    verdicts = [run(0.0, rule, seed) for seed in range(1000)]
    wrong = sum(v in (Verdict.BETTER, Verdict.WORSE) for v in verdicts)
    print(f"equal bots: {wrong} of 1000 gauntlets declared a difference; "
          f"{sum(v is Verdict.EVEN for v in verdicts)} stopped even, "
          f"{sum(v is Verdict.CAPPED for v in verdicts)} at the cap")
    assert wrong / 1000 <= rule.alpha


def test_a_stronger_challenger_is_found_better_in_far_fewer_sets_than_the_cap():
    rule = StoppingRule(alpha=0.05, max_sets=200)
    verdicts = [run(1.0, rule, seed) for seed in range(200)]
    assert sum(v is Verdict.BETTER for v in verdicts) >= 0.8 * 200
    assert Verdict.WORSE not in verdicts


def test_the_verdict_follows_the_bounds():
    rule = StoppingRule(alpha=0.05, beta=0.2, effect=0.15, max_sets=1000)
    assert decide(0, 0, 0, rule).verdict is Verdict.CONTINUE
    # log(2/0.05) / log(0.65/0.5) = 14.06: fifteen straight wins and no loss.
    assert decide(14, 0, 0, rule).verdict is Verdict.CONTINUE
    assert decide(15, 0, 0, rule).verdict is Verdict.BETTER
    assert decide(0, 15, 0, rule).verdict is Verdict.WORSE
    assert decide(40, 40, 0, rule).verdict is Verdict.EVEN
    assert decide(1, 1, 998, rule).verdict is Verdict.CAPPED
    wire = decide(15, 0, 2, rule).to_wire()
    assert wire["wins"] == [15, 0] and wire["deck_sets"] == 17 and wire["alpha"] == 0.05


def test_a_deck_set_is_won_on_the_mean_of_the_field_at_the_table():
    players = [["c", "a", "b"], ["a", "b", "c"]]
    assert set_outcome("c", players, [[4, 0, 0], [5, 1, 0]]) == 1  # 2 a seat against 1.5
    assert set_outcome("c", players, [[3, 0, 0], [5, 1, 0]]) == 0  # 1.5 against 1.5
    assert set_outcome("c", players, [[1, 2, 2], [2, 2, 1]]) == -1
    assert set_outcome("c", players, [[2, 2, 2], [2, 2, 2]]) == 0
    assert set_outcome("c", players, [[1, 2, 2], [2, 2, 1]], descending=False) == 1
    with pytest.raises(ValueError, match="did not play"):
        set_outcome("x", players, [[1, 2, 2], [2, 2, 1]])
