"""Whether neighbours in the standings are separated: a sign test over deck
sets (duplicate rotations share decks), and how many more matches would do."""

from __future__ import annotations

from arena.storage.base import MatchRecord, MatchStatus
from arena.tournament.separation import compare, sign_test_p
from arena.tournament.standings import compute_standings

FIVE = ["strong", "weak", "h1", "h2", "h3"]


def match(mid: str, players, stars, *, seed: str | None, at: float) -> MatchRecord:
    ranks = [sorted(stars, reverse=True).index(s) + 1 for s in stars]
    return MatchRecord(id=mid, game="muushig", players=list(players), rules={}, limits={},
                       status=MatchStatus.FINISHED, started_at=at - 1, finished_at=at,
                       tournament_id="t", seed=seed,
                       result={"stars": stars, "sums": [0] * 5, "ranks": ranks})


def deck_sets(outcomes: list[tuple[int, int]], rotations: int = 5) -> list[MatchRecord]:
    """One deck set per outcome (stars of strong, stars of weak per match),
    each played ``rotations`` times."""
    out = []
    for t, (a, b) in enumerate(outcomes):
        for r in range(rotations):
            out.append(match(f"m{t}-{r}", FIVE, [a, b, 5 - a - b, 0, 0], seed=f"0:{t}",
                             at=t * 10 + r))
    return out


def test_sign_test_p_values_are_exact_binomial_tails():
    assert sign_test_p(8, 0) == 2 / 256
    assert sign_test_p(0, 8) == 2 / 256
    assert sign_test_p(5, 5) == 1.0
    assert sign_test_p(0, 0) == 1.0


def test_the_rotations_of_one_deck_set_are_one_unit_not_five():
    sep = compare("strong", "weak", deck_sets([(3, 0)]))
    assert sep.deck_sets == 1 and not sep.significant and sep.p_value == 1.0


def test_a_bot_that_wins_every_deck_set_is_separated():
    sep = compare("strong", "weak", deck_sets([(2, 0)] * 8))
    assert sep.significant and sep.p_value == 2 / 256 and sep.more_matches == 0


def test_even_bots_are_not_separated_and_no_estimate_is_given():
    sep = compare("strong", "weak", deck_sets([(2, 0), (0, 2)] * 4))
    assert not sep.significant and sep.more_matches is None


def test_a_narrow_lead_estimates_the_matches_that_would_separate_it():
    outcomes = [(2, 0)] * 6 + [(0, 2)] * 3
    sep = compare("strong", "weak", deck_sets(outcomes))
    assert not sep.significant
    assert sep.more_matches is not None and sep.more_matches > 0
    assert sep.more_matches % 5 == 0  # whole deck sets of five rotations
    # The same share of wins over that many more matches is significant.
    sets = len(outcomes) + sep.more_matches // 5
    grown = [(2, 0)] * round(sets * 6 / 9) + [(0, 2)] * (sets - round(sets * 6 / 9))
    assert compare("strong", "weak", deck_sets(grown)).significant


def test_ties_in_a_deck_set_are_left_out_of_the_sign_test():
    sep = compare("strong", "weak", deck_sets([(1, 1)] * 4 + [(2, 0)] * 6))
    assert sep.a_better == 6 and sep.b_better == 0 and sep.deck_sets == 10
    assert sep.p_value == 2 / 64


def test_every_standings_row_but_the_last_carries_vs_next():
    rows = compute_standings(deck_sets([(2, 0)] * 8), bootstrap_samples=0)
    assert len(rows) == 5
    for row in rows[:-1]:
        vs = row.to_dict()["vs_next"]
        assert set(vs) >= {"significant", "p_value", "method", "more_matches"}
        assert isinstance(vs["significant"], bool) and 0.0 <= vs["p_value"] <= 1.0
    assert "vs_next" not in rows[-1].to_dict()


def test_the_cli_table_says_whether_each_bot_is_ahead_of_the_next():
    from arena.tournament.progress import render_table

    rows = compute_standings(deck_sets([(2, 0)] * 8), bootstrap_samples=0)
    text = render_table(rows)
    assert "ahead of next?" in text.splitlines()[0]
    body = text.splitlines()[2:]
    for row, line in zip(rows, body):
        vs = row.vs_next
        if vs is None:
            assert "yes (" not in line and "not yet" not in line
        elif vs["significant"]:
            assert f"yes (p={vs['p_value']:.3f})" in line
        else:
            assert "not yet (p=" in line


def test_the_stopping_rule_needs_every_pair_apart_at_the_reduced_level():
    from dataclasses import replace

    from arena.tournament.extension import separated, stopping_level

    rows = compute_standings(deck_sets([(2, 0)] * 8), bootstrap_samples=0)
    level = stopping_level(3)
    assert level == 0.05 / 4
    apart = [replace(r, vs_next=None if r is rows[-1] else {**(r.vs_next or {}), "p_value": 0.001})
             for r in rows]
    assert separated(apart, level)
    one_close = [replace(apart[0], vs_next={**apart[0].vs_next, "p_value": 0.02}), *apart[1:]]
    assert not separated(one_close, level)


def test_two_house_bots_side_by_side_are_not_compared():
    from dataclasses import replace

    from arena.tournament.extension import separated

    rows = compute_standings(deck_sets([(2, 0)] * 8), bootstrap_samples=0)
    named = [replace(r, bot=f"house-random-{i}") for i, r in enumerate(rows)]
    close = [replace(r, vs_next=None if r is named[-1] else {**r.vs_next, "p_value": 0.9})
             for r in named]
    assert separated(close, 0.01)
