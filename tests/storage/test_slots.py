"""Exactly-once slots: finishing a match fills its slot in the same
transaction, and a slot holding a finished match refuses a second one."""

from __future__ import annotations

import threading

import pytest

from arena.storage.base import (
    MatchStatus,
    NotFoundError,
    ScheduledMatch,
    SlotTakenError,
    StorageError,
    TournamentRecord,
    TournamentStatus,
)

from .helpers import finish_kwargs, match


def _tournament(store, tid="t1", n=3):
    store.create_tournament(
        TournamentRecord(id=tid, name="cup", game="muushig", config={},
                         status=TournamentStatus.RUNNING, created_at=1.0),
        [ScheduledMatch(tournament_id=tid, slot=i, players=["a"] * 5, seed=f"s:{i}")
         for i in range(n)])


def test_finishing_with_a_slot_fills_the_slot(store):
    _tournament(store)
    store.create_match(match("m1", tournament_id="t1"))
    store.finish_match("m1", **finish_kwargs(), slot=("t1", 1))
    assert store.get_match("m1").status is MatchStatus.FINISHED
    assert [s.match_id for s in store.get_schedule("t1")] == [None, "m1", None]


def test_a_slot_with_a_finished_match_refuses_a_second_one(store):
    _tournament(store)
    store.create_match(match("m1", tournament_id="t1"))
    store.create_match(match("m2", tournament_id="t1"))
    store.finish_match("m1", **finish_kwargs(), slot=("t1", 0))
    with pytest.raises(SlotTakenError, match="slot 0 .* already holds finished match 'm1'"):
        store.finish_match("m2", **finish_kwargs(), slot=("t1", 0))
    # The whole transaction was refused: m2 is still running, the slot keeps m1.
    assert store.get_match("m2").status is MatchStatus.RUNNING
    assert store.get_schedule("t1")[0].match_id == "m1"
    assert issubclass(SlotTakenError, StorageError)


def test_an_unknown_slot_refuses_the_finish(store):
    _tournament(store)
    store.create_match(match("m1", tournament_id="t1"))
    with pytest.raises(NotFoundError, match="no slot 7"):
        store.finish_match("m1", **finish_kwargs(), slot=("t1", 7))
    assert store.get_match("m1").status is MatchStatus.RUNNING


def test_a_refused_finish_fills_no_slot(store):
    _tournament(store)
    store.create_match(match("m1", tournament_id="t1"))
    with pytest.raises(StorageError, match="5 seats"):
        store.finish_match("m1", **finish_kwargs() | {"faults": []}, slot=("t1", 0))
    assert store.get_schedule("t1")[0].match_id is None


def test_two_nodes_finishing_one_slot_at_once_count_it_once(open_at):
    """Two stores (two nodes) race to finish a match for the same slot."""
    nodes = [open_at(), open_at()]
    _tournament(nodes[0])
    for i, node in enumerate(nodes):
        node.create_match(match(f"m{i}", tournament_id="t1"))
    start = threading.Barrier(2)
    outcomes: list[str] = []

    def finish(i: int) -> None:
        start.wait()
        try:
            nodes[i].finish_match(f"m{i}", **finish_kwargs(), slot=("t1", 2))
            outcomes.append("finished")
        except SlotTakenError:
            outcomes.append("refused")

    threads = [threading.Thread(target=finish, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert sorted(outcomes) == ["finished", "refused"]
    winner = nodes[0].get_schedule("t1")[2].match_id
    assert nodes[0].get_match(winner).status is MatchStatus.FINISHED
    loser = "m1" if winner == "m0" else "m0"
    assert nodes[0].get_match(loser).status is MatchStatus.RUNNING
