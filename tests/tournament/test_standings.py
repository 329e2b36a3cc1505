"""Standings follow the match rule summed over matches, and say how sure they are."""

from __future__ import annotations

import random
import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from openskill.models import PlackettLuce

from arena.storage.base import MatchRecord, MatchStatus, SeatFaults
from arena.tournament.standings import (
    StandingRow,
    bootstrap_interval,
    compute_standings,
    fold_ratings,
    rating_history,
)

FIVE = ["ann", "bob", "cid", "dan", "eve"]


def finished(mid: str, players, stars, sums, ranks, *, at: float, faults=None,
             latency=None, status=MatchStatus.FINISHED) -> MatchRecord:
    return MatchRecord(
        id=mid, game="muushig", players=list(players), rules={}, limits={}, status=status,
        started_at=at - 10, finished_at=at,
        result={"stars": stars, "sums": sums, "ranks": ranks,
                "final_scores": [[s] for s in sums]},
        faults=faults, latency_ms=latency)


def by_bot(rows):
    return {r.bot: r for r in rows}


def test_ranking_is_stars_then_lower_summed_scores_with_shared_places():
    matches = [
        finished("m1", FIVE, [2, 1, 1, 1, 0], [5, 10, 10, 20, 30], [1, 2, 2, 4, 5], at=100),
        finished("m2", FIVE, [0, 1, 1, 1, 2], [30, 10, 10, 0, 5], [5, 2, 2, 4, 1], at=200),
    ]
    rows = compute_standings(matches)
    # ann 2★/35, bob 2★/20, cid 2★/20, dan 2★/20, eve 2★/35 -> bob, cid, dan share 1st
    assert [(r.rank, r.bot) for r in rows] == [
        (1, "bob"), (1, "cid"), (1, "dan"), (4, "ann"), (4, "eve")]
    rows = by_bot(rows)
    assert (rows["ann"].stars, rows["ann"].score_sum, rows["ann"].matches) == (2, 35, 2)
    assert rows["ann"].wins == 1 and rows["eve"].wins == 1 and rows["bob"].wins == 0
    assert rows["ann"].avg_place == 3.0 and rows["bob"].avg_place == 2.0
    assert rows["dan"].stars_per_match == 1.0


def test_stars_outrank_scores():
    matches = [finished("m1", FIVE, [1, 1, 1, 1, 1], [0, 0, 0, 0, 0], [1, 1, 1, 1, 1], at=1),
               finished("m2", FIVE, [0, 0, 0, 0, 5], [0, 0, 0, 0, 99], [1, 1, 1, 1, 5],
                        at=2)]
    rows = compute_standings(matches)
    assert rows[0].bot == "eve" and rows[0].rank == 1  # 6 stars beat a low score
    assert [r.rank for r in rows] == [1, 2, 2, 2, 2]
    assert by_bot(rows)["eve"].wins == 1  # a shared first place is a win


def test_only_finished_matches_count():
    matches = [
        finished("m1", FIVE, [1, 1, 1, 1, 1], [1, 1, 1, 1, 1], [1, 1, 1, 1, 1], at=1),
        finished("m2", FIVE, [5, 0, 0, 0, 0], [0, 9, 9, 9, 9], [1, 2, 2, 2, 2], at=2,
                 status=MatchStatus.ABORTED),
        finished("m3", FIVE, [5, 0, 0, 0, 0], [0, 9, 9, 9, 9], [1, 2, 2, 2, 2], at=3,
                 status=MatchStatus.RUNNING),
    ]
    rows = compute_standings(matches)
    assert all(r.matches == 1 and r.stars == 1 and r.rank == 1 for r in rows)
    assert compute_standings([]) == []


def test_faults_and_median_latency():
    faults = [SeatFaults(timeouts=1), SeatFaults(illegal=2), SeatFaults(),
              SeatFaults(disconnects=1, autopilot=True), SeatFaults()]
    latency = [[10.0, 30.0], [5.0], [], [1.0, 2.0, 3.0], []]
    m1 = finished("m1", FIVE, [1] * 5, [0] * 5, [1] * 5, at=1, faults=faults, latency=latency)
    m2 = finished("m2", FIVE, [1] * 5, [0] * 5, [1] * 5, at=2,
                  faults=[{"timeouts": 2, "illegal": 0, "disconnects": 0, "autopilot": False}]
                  + [SeatFaults()] * 4, latency=[[20.0], [], [], [], []])
    rows = by_bot(compute_standings([m1, m2]))
    assert rows["ann"].timeouts == 3 and rows["ann"].median_latency_ms == 20.0
    assert rows["bob"].illegal == 2 and rows["bob"].median_latency_ms == 5.0
    assert rows["dan"].disconnects == 1 and rows["dan"].median_latency_ms == 2.0
    assert rows["cid"].median_latency_ms is None  # never decided anything
    no_latency = finished("m3", FIVE, [1] * 5, [0] * 5, [1] * 5, at=3)
    assert compute_standings([no_latency])[0].median_latency_ms is None


def test_rating_matches_openskill_plackett_luce_rated_in_finishing_order():
    m_late = finished("late", ["ann", "bob", "cid", "dan", "eve"], [0, 0, 1, 2, 2],
                      [9, 9, 5, 1, 0], [5, 4, 3, 2, 1], at=200)
    m_early = finished("early", ["eve", "dan", "cid", "bob", "ann"], [3, 1, 1, 0, 0],
                       [0, 1, 2, 3, 3], [1, 2, 2, 4, 4], at=100)
    rows = by_bot(compute_standings([m_late, m_early]))  # given out of order on purpose

    model = PlackettLuce()
    r = {b: model.rating(name=b) for b in FIVE}
    for m in (m_early, m_late):
        new = model.rate([[r[b]] for b in m.players], ranks=m.result["ranks"])
        for b, team in zip(m.players, new):
            r[b] = team[0]
    for bot in FIVE:
        assert rows[bot].rating_mu == pytest.approx(r[bot].mu)
        assert rows[bot].rating_sigma == pytest.approx(r[bot].sigma)
        assert rows[bot].rating == pytest.approx(r[bot].ordinal())
    # direction: eve won both, ann lost both; everyone became more certain
    assert rows["eve"].rating_mu > 25 > rows["ann"].rating_mu
    assert all(row.rating_sigma < 25 / 3 for row in rows.values())
    # cid and dan tied in the early match: the tie shows in the first update
    first = model.rate([[model.rating()] for _ in range(5)], ranks=[1, 2, 2, 4, 4])
    assert first[1][0].mu == pytest.approx(first[2][0].mu)


def test_rating_hand_checked_for_a_single_match():
    rows = by_bot(compute_standings([finished("m", FIVE, [5, 0, 0, 0, 0], [0, 1, 2, 3, 4],
                                              [1, 2, 3, 4, 5], at=1)]))
    mus = [rows[b].rating_mu for b in FIVE]
    assert mus == sorted(mus, reverse=True) and mus[0] > 25 > mus[-1]
    assert sum(mus) == pytest.approx(125, abs=1e-6)  # Plackett-Luce updates are zero-sum
    assert rows["ann"].rating == pytest.approx(rows["ann"].rating_mu
                                               - 3 * rows["ann"].rating_sigma)


def test_rating_history_follows_one_bot():
    matches = [finished(f"m{i}", FIVE, [5, 0, 0, 0, 0], [0, 1, 1, 1, 1], [1, 2, 2, 2, 2],
                        at=100 + i) for i in range(3)]
    history = rating_history(reversed(matches), "ann")
    assert [h[0] for h in history] == ["m0", "m1", "m2"]
    assert [h[1] for h in history] == [100, 101, 102]
    mus = [h[2] for h in history]
    sigmas = [h[3] for h in history]
    assert mus == sorted(mus) and sigmas == sorted(sigmas, reverse=True)
    final = by_bot(compute_standings(matches))["ann"]
    assert (mus[-1], sigmas[-1]) == pytest.approx((final.rating_mu, final.rating_sigma))
    assert rating_history(matches, "nobody") == []


def test_house_bots_can_be_left_out_and_ranks_renumbered():
    players = ["ann", "house-heuristic-1", "bob", "house-heuristic-2", "robot"]
    m = finished("m", players, [0, 3, 1, 1, 0], [9, 0, 4, 4, 8], [4, 1, 2, 2, 4], at=1)
    rows = compute_standings([m], include_house=False, house=["robot"])
    assert [(r.rank, r.bot) for r in rows] == [(1, "bob"), (2, "ann")]
    everyone = compute_standings([m])
    assert [r.bot for r in everyone][:2] == ["house-heuristic", "bob"]


def test_house_seats_are_one_entrant_counted_once_per_seat():
    # The arena numbers its house seats so a match never names one bot twice;
    # they are one player: the table, the export and the web count them alike.
    players = ["ann", "house-heuristic-1", "bob", "house-heuristic-2", "house-random-3"]
    m1 = finished("m1", players, [0, 3, 1, 1, 0], [9, 0, 4, 4, 8], [4, 1, 2, 2, 4], at=1)
    m2 = finished("m2", players, [1, 0, 2, 2, 0], [5, 9, 1, 1, 9], [3, 4, 1, 1, 4], at=2)
    rows = by_bot(compute_standings([m1, m2]))
    assert sorted(rows) == ["ann", "bob", "house-heuristic", "house-random"]
    house = rows["house-heuristic"]
    assert (house.matches, house.stars, house.score_sum) == (4, 6, 14)
    assert house.stars_per_match == 1.5
    assert [h[0] for h in rating_history([m1, m2], "house-heuristic")] == ["m1", "m2"]


def test_bootstrap_interval_degenerate_cases():
    assert bootstrap_interval([2, 2, 2, 2], samples=2000, seed=0) == (2.0, 2.0)
    assert bootstrap_interval([3], samples=2000, seed=0) == (3.0, 3.0)
    with pytest.raises(ValueError):
        bootstrap_interval([], samples=10, seed=0)
    rows = compute_standings([finished("m", FIVE, [1] * 5, [0] * 5, [1] * 5, at=1)])
    assert all(r.stars_ci_low == r.stars_ci_high == 1.0 for r in rows)


def test_bootstrap_interval_is_deterministic_and_brackets_the_mean():
    values = [0, 1, 1, 2, 3, 0, 1, 5, 2, 1]
    low, high = bootstrap_interval(values, samples=2000, seed="x")
    assert (low, high) == bootstrap_interval(values, samples=2000, seed="x")
    assert low < statistics.fmean(values) < high
    assert 0 <= low and high <= 5
    narrow = bootstrap_interval(values * 10, samples=2000, seed="x")  # 10x the data
    assert narrow[1] - narrow[0] < (high - low) / 2


def test_bootstrap_interval_covers_the_true_mean_about_95_percent_of_the_time():
    rng = random.Random(42)
    population = [0, 0, 1, 1, 1, 2, 2, 3, 5]  # stars per match, mean 15/9
    true_mean = statistics.fmean(population)
    trials, covered = 200, 0
    for t in range(trials):
        sample = rng.choices(population, k=40)
        low, high = bootstrap_interval(sample, samples=400, seed=t)
        covered += low <= true_mean <= high
    assert 0.85 <= covered / trials <= 1.0


def test_standings_are_deterministic_and_serialisable():
    rng = random.Random(1)
    matches = []
    for i in range(30):
        players = rng.sample(FIVE + ["fay", "gus"], 5)
        stars = [rng.randint(0, 2) for _ in range(5)]
        sums = [rng.randint(0, 40) for _ in range(5)]
        keys = sorted(range(5), key=lambda s: (-stars[s], sums[s]))
        ranks = [0] * 5
        for place, s in enumerate(keys):
            prev = keys[place - 1] if place else None
            same = prev is not None and (stars[prev], sums[prev]) == (stars[s], sums[s])
            ranks[s] = ranks[prev] if same else place + 1
        matches.append(finished(f"m{i}", players, stars, sums, ranks, at=i))
    a = compute_standings(matches, bootstrap_samples=500, seed=3)
    assert a == compute_standings(matches, bootstrap_samples=500, seed=3)
    assert sum(r.matches for r in a) == 150
    for row in a:
        assert StandingRow.from_dict(row.to_dict()) == row
        assert row.stars_ci_low <= row.stars_per_match <= row.stars_ci_high


@given(st.integers(min_value=0, max_value=12), st.randoms(use_true_random=False))
@settings(max_examples=30, deadline=None)
def test_folding_ratings_in_two_batches_ends_where_one_pass_does(split: int, rng) -> None:
    bots = [f"b{i}" for i in range(7)]
    matches = []
    for i in range(12):
        players = rng.sample(bots, 5)
        ranks = rng.sample(range(1, 6), 5)
        matches.append(finished(f"m{i:02d}", players, [0] * 5, [0] * 5, ranks, at=100.0 + i))
    one = fold_ratings(matches)
    two = fold_ratings(matches[split:], fold_ratings(matches[:split]))
    flat = {(g, b): (r.mu, r.sigma) for g, rs in one.items() for b, r in rs.items()}
    assert flat == {(g, b): (r.mu, r.sigma) for g, rs in two.items() for b, r in rs.items()}
    rows = compute_standings(matches, bootstrap_samples=0)
    assert {r.bot: (r.rating_mu, r.rating_sigma) for r in rows} == \
        {b: v for (_, b), v in flat.items()}
