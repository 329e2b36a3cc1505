"""Schedules: who meets whom, in which seat, with which decks."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.tournament.schedule import (
    ScheduleError,
    ScheduleKind,
    default_table_count,
    deck_seed,
    house_bot_names,
    make_schedule,
    pair_spread,
    resolve_kind,
)


def names(n: int) -> list[str]:
    return [f"bot{i:02d}" for i in range(n)]


def seat_counts(schedule, seats=5) -> dict[str, list[int]]:
    counts: dict[str, list[int]] = {}
    for table in schedule:
        for seat, bot in enumerate(table.players):
            counts.setdefault(bot, [0] * seats)[seat] += 1
    return counts


def spread(values) -> int:
    values = list(values)
    return max(values) - min(values)


def schedule_pair_spread(schedule, entrants) -> int:
    index = {b: i for i, b in enumerate(entrants)}
    return pair_spread([[index[p] for p in t.players] for t in schedule], len(entrants))


@pytest.mark.parametrize("n", [5, 6, 7, 8])
def test_round_robin_meets_every_five_subset_exactly_once(n):
    entrants = names(n)
    schedule = make_schedule(entrants, kind="round_robin", duplicate=False, seed=3)
    met = Counter(frozenset(t.players) for t in schedule)
    assert len(schedule) == math.comb(n, 5)
    assert set(met) == {frozenset(c) for c in itertools.combinations(entrants, 5)}
    assert set(met.values()) == {1}
    for counts in seat_counts(schedule).values():  # every seat as equally as possible
        assert spread(counts) <= 1


@pytest.mark.parametrize("n", [6, 7, 8, 9])
def test_round_robin_seats_are_exactly_equal_when_divisible(n):
    # C(n-1, 4) appearances each; divisible by 5 for these n
    schedule = make_schedule(names(n), kind="round_robin", duplicate=False)
    assert math.comb(n - 1, 4) % 5 == 0
    assert all(spread(c) == 0 for c in seat_counts(schedule).values())


@pytest.mark.parametrize("n", [12, 20])
def test_balanced_schedule_balances_pairs_seats_and_tables(n):
    entrants = names(n)
    schedule = make_schedule(entrants, kind="balanced", duplicate=False, seed=1)
    assert len(schedule) == default_table_count(n, 5)
    assert schedule_pair_spread(schedule, entrants) <= 1
    appearances = Counter(b for t in schedule for b in t.players)
    assert set(appearances) == set(entrants) and spread(appearances.values()) == 0
    played = appearances[entrants[0]]
    # equal seats when the number of tables each plays allows it, else ±1
    assert all(spread(c) == (0 if played % 5 == 0 else 1)
               for c in seat_counts(schedule).values())
    with_duplicates = make_schedule(entrants, kind="balanced", seed=1)
    assert all(spread(c) == 0 for c in seat_counts(with_duplicates).values())
    assert [t.seed for t in schedule] == [deck_seed(1, i) for i in range(len(schedule))]


@pytest.mark.parametrize("n,tables", [(12, 12), (20, 24), (13, 13), (16, 16), (11, 11)])
def test_balanced_schedule_with_a_given_table_count(n, tables):
    entrants = names(n)
    schedule = make_schedule(entrants, kind="balanced", tables=tables, duplicate=False)
    assert len(schedule) == tables
    assert schedule_pair_spread(schedule, entrants) <= 1
    assert spread(Counter(b for t in schedule for b in t.players).values()) <= 1
    assert all(spread(c) <= 1 for c in seat_counts(schedule).values())


def test_auto_picks_round_robin_only_when_it_fits():
    assert resolve_kind(8, seats=5, kind="auto", max_tables=56) is ScheduleKind.ROUND_ROBIN
    assert resolve_kind(8, seats=5, kind="auto", max_tables=55) is ScheduleKind.BALANCED
    assert resolve_kind(3, seats=5, kind="auto", max_tables=1) is ScheduleKind.ROUND_ROBIN
    assert resolve_kind(30, seats=5, kind="round_robin", max_tables=1) is ScheduleKind.ROUND_ROBIN
    assert len(make_schedule(names(8), max_tables=55, duplicate=False)) == \
        default_table_count(8, 5)


def test_duplicate_rotations_give_every_bot_every_seats_cards_once():
    schedule = make_schedule(names(7), seed=11)
    assert len(schedule) == 5 * math.comb(7, 5)
    assert [t.slot for t in schedule] == list(range(len(schedule)))
    by_table: dict[int, list] = {}
    for t in schedule:
        by_table.setdefault(t.table, []).append(t)
    for table, rotations in by_table.items():
        assert [r.rotation for r in rotations] == [0, 1, 2, 3, 4]
        assert {r.seed for r in rotations} == {deck_seed(11, table)}  # the same decks
        base = rotations[0].players
        for r in rotations:  # seat k holds the players rotated by k
            assert r.players == tuple(base[(s + r.rotation) % 5] for s in range(5))
        for bot in base:  # every bot sits in every seat once
            assert sorted(r.players.index(bot) for r in rotations) == [0, 1, 2, 3, 4]
    assert len({t.seed for t in schedule}) == math.comb(7, 5)  # tables differ
    assert all(spread(c) == 0 for c in seat_counts(schedule).values())


@pytest.mark.parametrize("n", [1, 2, 4])
def test_fewer_than_five_entrants_are_joined_by_house_bots(n):
    schedule = make_schedule(names(n), duplicate=True, seed=0)
    assert len(schedule) == 5  # one table, five rotations
    expected_house = house_bot_names("heuristic", 5 - n)
    assert expected_house[0] == "house-heuristic-1"
    for t in schedule:
        assert sorted(t.players) == sorted(names(n) + expected_house)
    custom = make_schedule(names(n), house_names=[f"house-random-{i}" for i in range(9)])
    assert {p for t in custom for p in t.players} - set(names(n)) == {
        f"house-random-{i}" for i in range(5 - n)}


def test_schedule_errors_are_explicit():
    with pytest.raises(ScheduleError, match="at least one entrant"):
        make_schedule([])
    with pytest.raises(ScheduleError, match="unique: a"):
        make_schedule(["a", "a", "b", "c", "d"])
    with pytest.raises(ScheduleError, match="need 2 house bots, only 1"):
        make_schedule(["a", "b", "c"], house_names=["house-x-1"])
    with pytest.raises(ScheduleError, match="clash"):
        make_schedule(["a", "b", "c", "d"], house_names=["a"])
    with pytest.raises(ScheduleError, match="more than"):
        make_schedule(names(40), kind="round_robin")
    with pytest.raises(ScheduleError, match="tables must be"):
        make_schedule(names(12), kind="balanced", tables=0)
    with pytest.raises(ValueError):
        make_schedule(names(6), kind="swiss")


def test_a_schedule_is_a_pure_function_of_its_seed():
    a = make_schedule(names(12), kind="balanced", seed=5)
    assert a == make_schedule(names(12), kind="balanced", seed=5)
    assert a != make_schedule(names(12), kind="balanced", seed=6)
    rr = make_schedule(names(8), seed=5)
    assert rr == make_schedule(names(8), seed=5)
    assert [t.players for t in rr] != [t.players for t in make_schedule(names(8), seed=6)]


def test_other_table_sizes_work_too():
    schedule = make_schedule(names(6), seats=4, kind="round_robin", duplicate=True)
    assert len(schedule) == 4 * math.comb(6, 4)
    assert all(len(t.players) == 4 for t in schedule)
    assert all(spread(c) == 0 for c in seat_counts(schedule, seats=4).values())


@settings(max_examples=25, deadline=None)
@given(n=st.integers(5, 9), seats=st.integers(2, 5), seed=st.integers(0, 10**6))
def test_round_robin_seat_balance_holds_for_any_size(n, seats, seed):
    schedule = make_schedule(names(n), seats=seats, kind="round_robin", duplicate=False,
                             seed=seed)
    assert len(schedule) == math.comb(n, seats)
    assert len({frozenset(t.players) for t in schedule}) == len(schedule)
    assert all(spread(c) <= 1 for c in seat_counts(schedule, seats).values())
