"""The ladder's ratings on each tick: what a tick reads does not grow with the
history, and the ratings are those of a computation over every match. Run
on both stores (SQLite and PostgreSQL)."""

from __future__ import annotations

import random
from typing import Any, Iterator

import pytest

from arena.hosting.ratings import LadderRatings, full_ladder_ratings
from arena.storage import open_store
from arena.storage.base import MatchRecord, MatchStatus, SeatFaults, Store

BOTS = [f"bot{i}" for i in range(8)]


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[Store]:
    location = (str(request.getfixturevalue("pg_url")) if request.param == "postgresql"
                else str(tmp_path / "arena.db"))
    opened = open_store(location)
    yield opened
    opened.close()


class CountingStore:
    """The store, counting the match rows each read returns."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.rows = 0
        self.full_reads = 0

    def count_matches(self, **kw: Any) -> int:
        return self.store.count_matches(**kw)

    def list_matches(self, **kw: Any) -> list[MatchRecord]:
        page = self.store.list_matches(**kw)
        self.rows += len(page)
        return page

    def finished_matches(self, **kw: Any) -> list[MatchRecord]:
        self.full_reads += 1
        matches = self.store.finished_matches(**kw)
        self.rows += len(matches)
        return matches


class Matches:
    """Hand-made finished five-seat Muushig matches with given places."""

    def __init__(self, store: Store, rng: random.Random) -> None:
        self.store, self.rng, self.n, self.clock = store, rng, 0, 1_000_000.0
        for bot in BOTS:
            store.ensure_bot(bot)

    def finish(self, *, tournament_id: str | None = None, finished_at: float | None = None,
               players: list[str] | None = None) -> str:
        self.n += 1
        self.clock += 10
        match_id = f"m{self.n:05d}"
        players = players or self.rng.sample(BOTS, 5)
        ranks = [1, 2, 3, 4, 5]
        self.rng.shuffle(ranks)
        at = finished_at if finished_at is not None else self.clock
        self.store.create_match(MatchRecord(
            id=match_id, game="muushig", players=players, rules={}, limits={},
            status=MatchStatus.RUNNING, started_at=at - 5, tournament_id=tournament_id))
        self.store.finish_match(match_id, result={"ranks": ranks, "stars": [0] * 5},
                                reveal=[], faults=[SeatFaults() for _ in players],
                                latency_ms=[[] for _ in players], finished_at=at)
        return match_id


def close_to(a: dict[Any, tuple[float, float]], b: dict[Any, tuple[float, float]]) -> bool:
    return a.keys() == b.keys() and all(
        abs(a[k][0] - b[k][0]) < 1e-9 and abs(a[k][1] - b[k][1]) < 1e-9 for k in a)


def test_a_tick_reads_only_the_matches_finished_since_the_last(store: Store) -> None:
    matches = Matches(store, random.Random(1))
    counting = CountingStore(store)
    ratings = LadderRatings(counting)
    per_tick: dict[int, list[int]] = {}
    for history in (100, 300):
        while matches.n < history:
            matches.finish()
        ratings()  # catches up with the history
        per_tick[history] = []
        for _ in range(5):
            matches.finish()
            counting.rows = 0
            ratings()
            per_tick[history].append(counting.rows)
    # One new match costs one short page, however long the history.
    assert max(per_tick[100]) <= 16 and per_tick[300] == per_tick[100], per_tick
    assert counting.full_reads == 1  # only the first call read everything


def test_a_tick_with_nothing_new_reads_no_match(store: Store) -> None:
    matches = Matches(store, random.Random(2))
    for _ in range(50):
        matches.finish()
    counting = CountingStore(store)
    ratings = LadderRatings(counting)
    ratings()
    counting.rows = 0
    for _ in range(3):
        ratings()
    assert counting.rows == 0


def test_folded_ratings_equal_a_full_computation_at_every_tick(store: Store) -> None:
    rng = random.Random(3)
    matches = Matches(store, rng)
    ratings = LadderRatings(store)
    for _ in range(25):
        for _ in range(rng.randrange(0, 4)):
            matches.finish(tournament_id=rng.choice([None, None, "cup"]))
        assert close_to(ratings(), full_ladder_ratings(store))
    assert ratings.full_reads == 1
    assert all(game == "muushig" for game, _ in ratings())


def test_tournament_and_validation_matches_are_not_rated(store: Store) -> None:
    matches = Matches(store, random.Random(4))
    ratings = LadderRatings(store)
    matches.finish(players=BOTS[:5])
    ratings()
    matches.finish(players=["bot5", "bot6", "bot7", "bot0", "bot1"], tournament_id="validation")
    assert {bot for _, bot in ratings()} == set(BOTS[:5])
    assert ratings.full_reads == 1


def test_a_match_that_finished_out_of_order_is_rated_in_its_place(store: Store) -> None:
    matches = Matches(store, random.Random(5))
    for _ in range(10):
        matches.finish()
    ratings = LadderRatings(store)
    ratings()
    # Another node's clock: a match stored now that finished before the last.
    matches.finish(finished_at=matches.clock - 55)
    assert close_to(ratings(), full_ladder_ratings(store))
    assert ratings.full_reads == 2  # folding cannot insert it: everything was read again


def test_new_matches_beyond_the_read_limit_are_read_in_full(store: Store) -> None:
    matches = Matches(store, random.Random(6))
    ratings = LadderRatings(store, max_new_rows=32)
    ratings()
    for _ in range(40):
        matches.finish()
    assert close_to(ratings(), full_ladder_ratings(store))
    assert ratings.full_reads == 2
