"""The Swiss pairing rule (arena/tournament/swiss.py), one test per rule."""

from __future__ import annotations

import itertools
import random
from collections import Counter

import pytest
from hypothesis import given, settings, strategies as st

from arena.storage.base import ScheduledMatch
from arena.tournament.config import ConfigError, parse_config
from arena.tournament.schedule import ScheduleError
from arena.tournament.swiss import (
    met_counts,
    next_round,
    pair_round,
    repeats,
    round_seed,
    round_tables,
    rounds_of,
    standing_order,
    swiss_round,
)

NAMES = [f"b{i:02d}" for i in range(40)]


def stars(points: dict[str, int]) -> dict[str, dict[str, float]]:
    return {bot: {"stars": p, "sums": 0} for bot, p in points.items()}


def test_round_one_order_is_a_seeded_draw_not_the_file_order():
    first = standing_order(NAMES, {}, game="muushig", seed=7, number=1)
    assert sorted(first) == NAMES and first != NAMES
    assert first == standing_order(NAMES, {}, game="muushig", seed=7, number=1)
    assert first != standing_order(NAMES, {}, game="muushig", seed=8, number=1)


def test_the_standing_orders_the_field_and_the_draw_only_breaks_ties():
    points = {"a": 9, "b": 3, "c": 3, "d": 0}
    order = standing_order(list(points), stars(points), game="muushig", seed=1, number=2)
    assert order[0] == "a" and order[-1] == "d" and set(order[1:3]) == {"b", "c"}
    # Muushig's second key (score sum, less is better) comes before the draw.
    figures = {"b": {"stars": 3, "sums": 50}, "c": {"stars": 3, "sums": 10}}
    assert standing_order(["b", "c"], figures, game="muushig", seed=1, number=2) == ["c", "b"]


def test_similar_standings_sit_together_when_nobody_has_met():
    order = NAMES[:15]
    tables = pair_round(order, seats=5, met={})
    assert tables == [tuple(order[0:5]), tuple(order[5:10]), tuple(order[10:15])]


def test_a_repeated_table_mate_is_swapped_for_the_next_fresh_one():
    order = NAMES[:10]
    met = met_counts([order[0:5]])  # the top five shared a table last round
    tables = pair_round(order, seats=5, met=met)
    assert tables[0][0] == order[0] and sorted(itertools.chain(*tables)) == order
    # Five who all met, at two tables: the least possible is a group of
    # three and one of two meeting again, C(3,2) + C(2,2) = 4 repeats (the
    # top-down fill alone leaves all five at the bottom table: 10).
    assert repeats(tables, met) == 4


def test_a_repeat_is_taken_only_when_the_window_has_no_one_fresh():
    order = NAMES[:5]
    met = met_counts([order])
    assert pair_round(order, seats=5, met=met) == [tuple(order)]


def test_house_bots_fill_the_last_table_only():
    house = ["house-heuristic-1", "house-heuristic-2", "house-heuristic-3"]
    tables = pair_round(NAMES[:7], seats=5, met={}, house=house)
    assert tables[0] == tuple(NAMES[:5])
    assert tables[1] == (NAMES[5], NAMES[6], *house)


def test_too_few_house_bots_is_an_error_that_says_how_many():
    with pytest.raises(ScheduleError, match="3 empty seats"):
        pair_round(NAMES[:7], seats=5, met={}, house=["house-heuristic-1"])


def test_every_table_of_a_round_deals_the_same_decks_in_every_rotation():
    swiss = swiss_round(NAMES[:10], [], [], game="muushig", seats=5, seed=3, number=4)
    tables = round_tables(swiss, seed=3, first_slot=20, first_table=8, duplicate=True)
    assert len(tables) == 10 and {t.seed for t in tables} == {round_seed(3, 4)}
    assert [t.slot for t in tables] == list(range(20, 30))
    by_table: dict[int, list[tuple[str, ...]]] = {}
    for t in tables:
        by_table.setdefault(t.table, []).append(t.players)
    assert sorted(by_table) == [8, 9]
    for rotations in by_table.values():  # every player holds every seat once
        for seat in range(5):
            assert len({players[seat] for players in rotations}) == 5


def slots_for(tid: str, schedule: list[ScheduledMatch], points: dict[str, int],
              names: list[str], seats: int = 5) -> list[ScheduledMatch] | None:
    from arena.tournament.standings import StandingRow

    rows = [StandingRow(rank=1, bot=b, matches=1, wins=0, avg_place=1.0, rating_mu=0.0,
                        rating_sigma=0.0, rating=0.0, timeouts=0, illegal=0, disconnects=0,
                        median_latency_ms=None, figures={"stars": p, "sums": 0})
            for b, p in points.items()]
    return next_round(tid, names, schedule, rows, game="muushig", seats=seats, seed=5,
                      rounds=3, duplicate=True, house=[])


def test_the_next_round_waits_for_the_last_and_stops_after_the_last_round():
    names = NAMES[:10]
    first = slots_for("t", [], {}, names)
    assert first is not None and {s.extra["round"] for s in first} == {1}
    assert slots_for("t", first, {}, names) is None  # round 1 not played yet
    done = [ScheduledMatch(**{**s.__dict__, "match_id": f"m{s.slot}"}) for s in first]
    second = slots_for("t", done, {n: i for i, n in enumerate(names)}, names)
    assert second is not None and second[0].slot == len(first)
    assert {s.extra["round"] for s in second} == {2}
    assert {s.extra["table"] for s in second} == {2, 3}
    top = set(second[0].players)
    assert top == set(names[5:])  # the five with most stars sit together
    third = [ScheduledMatch(**{**s.__dict__, "match_id": f"m{s.slot}"}) for s in second]
    final = done + third + [ScheduledMatch(**{**s.__dict__, "match_id": "x"})
                            for s in slots_for("t", done + third, {}, names) or []]
    assert sorted(rounds_of(final)) == [1, 2, 3]
    assert slots_for("t", final, {}, names) is None  # rounds = 3 are all paired


@settings(max_examples=30, deadline=None)
@given(st.integers(min_value=2, max_value=60), st.sampled_from([2, 4, 5]),
       st.integers(min_value=0, max_value=10**6))
def test_every_entrant_sits_once_per_round_at_tables_of_the_game_size(n, seats, seed):
    rng = random.Random(seed)
    names = NAMES[:n] if n <= 40 else [f"x{i}" for i in range(n)]
    played: list[list[str]] = []
    house = [f"house-heuristic-{i}" for i in range(1, seats)]
    for number in range(1, 5):
        order = standing_order(names, {b: {"stars": rng.randrange(5), "sums": 0}
                                       for b in names}, game="muushig", seed=seed, number=number)
        tables = pair_round(order, seats=seats, met=met_counts(played), house=house)
        assert all(len(t) == seats for t in tables)
        seated = Counter(p for t in tables for p in t if not p.startswith("house-"))
        assert seated == Counter(names)
        played += [list(t) for t in tables]


def test_forty_bots_meet_again_far_less_often_than_seated_in_plain_standing_order():
    swiss = plain = 0
    for seed in range(10):
        rng = random.Random(seed)
        played: list[list[str]] = []
        for number in range(1, 6):
            points = {b: rng.randrange(12) for b in NAMES}
            order = standing_order(NAMES, stars(points), game="muushig", seed=1, number=number)
            met = met_counts(played)
            tables = pair_round(order, seats=5, met=met)
            swiss += repeats(tables, met)
            plain += repeats([order[i:i + 5] for i in range(0, 40, 5)], met)
            played += [list(t) for t in tables]
    print(f"repeated table-mates: Swiss {swiss}, plain order {plain}")
    assert swiss * 4 < plain


def test_the_file_names_rounds_for_swiss_and_only_for_swiss(tmp_path):
    base = {"name": "s", "entrant": [{"name": "a", "remote": True}]}
    config = parse_config({**base, "schedule": {"kind": "swiss", "rounds": 4}}, base_dir=tmp_path)
    assert config.schedule.rounds == 4 and config.to_wire()["schedule"]["rounds"] == 4
    with pytest.raises(ConfigError, match="schedule.rounds: kind = \"swiss\" needs rounds"):
        parse_config({**base, "schedule": {"kind": "swiss"}}, base_dir=tmp_path)
    with pytest.raises(ConfigError, match="schedule.rounds: only kind = \"swiss\""):
        parse_config({**base, "schedule": {"rounds": 3}}, base_dir=tmp_path)
    with pytest.raises(ConfigError, match="schedule.until_separated"):
        parse_config({**base, "schedule": {"kind": "swiss", "rounds": 3,
                                           "until_separated": True}}, base_dir=tmp_path)
    plain = parse_config(base, base_dir=tmp_path)
    assert "rounds" not in plain.to_wire()["schedule"]  # older tournament ids stay the same
