"""``Store.extend_schedule``: a Swiss round is appended once, whichever node
asks first, on both backends."""

from __future__ import annotations

import threading
import time

import pytest

from arena.storage.base import NotFoundError, ScheduledMatch, TournamentRecord, TournamentStatus


def _slots(first: int, count: int, label: str) -> list[ScheduledMatch]:
    return [ScheduledMatch(tournament_id="t", slot=first + i, players=["a", "b"], seed=label,
                           extra={"round": label}) for i in range(count)]


def _create(store) -> None:
    store.create_tournament(TournamentRecord(id="t", name="t", game="muushig", config={},
                                             status=TournamentStatus.PENDING,
                                             created_at=time.time()), _slots(0, 2, "1"))


def test_a_round_is_appended_after_the_last_slot(store):
    _create(store)
    assert store.extend_schedule("t", _slots(2, 3, "2"))
    schedule = store.get_schedule("t")
    assert [s.slot for s in schedule] == [0, 1, 2, 3, 4]
    assert [s.extra["round"] for s in schedule] == ["1", "1", "2", "2", "2"]


def test_the_same_round_appended_again_adds_nothing(store):
    _create(store)
    assert store.extend_schedule("t", _slots(2, 2, "2"))
    assert not store.extend_schedule("t", _slots(2, 2, "2 again"))
    assert [s.seed for s in store.get_schedule("t")] == ["1", "1", "2", "2"]


def test_an_unknown_tournament_is_not_found(store):
    with pytest.raises(NotFoundError):
        store.extend_schedule("nope", _slots(0, 1, "1"))


def test_two_nodes_appending_at_once_add_one_round(open_at):
    first = open_at()
    _create(first)
    stores = [open_at() for _ in range(4)]
    results: list[bool] = []
    start = threading.Barrier(len(stores))

    def append(i: int) -> None:
        start.wait()
        results.append(stores[i].extend_schedule("t", _slots(2, 3, f"node {i}")))

    threads = [threading.Thread(target=append, args=(i,)) for i in range(len(stores))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert sorted(results) == [False, False, False, True]
    schedule = first.get_schedule("t")
    assert len(schedule) == 5 and len({s.seed for s in schedule[2:]}) == 1
