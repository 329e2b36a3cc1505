"""A tournament slot is completed in the same transaction that finishes its
match: exactly once, whatever crashes in between."""

from __future__ import annotations

import pytest

from arena.storage.base import MatchStatus, ScheduledMatch, SlotTakenError, TournamentRecord, TournamentStatus
from arena.storage.sqlite import SqliteStore
from tests.storage.helpers import finish_kwargs, match


def store_with_slot(tmp_path) -> SqliteStore:
    store = SqliteStore(tmp_path / "s.db")
    store.create_tournament(
        TournamentRecord(id="t", name="t", game="muushig", config={},
                         status=TournamentStatus.RUNNING, created_at=1.0),
        [ScheduledMatch(tournament_id="t", slot=0, players=["a"] * 5, seed="0:0")])
    return store


def test_finishing_a_match_with_its_slot_completes_the_slot(tmp_path):
    store = store_with_slot(tmp_path)
    store.create_match(match("m1"))
    store.finish_match("m1", **finish_kwargs(), slot=("t", 0))
    assert store.get_schedule("t")[0].match_id == "m1"
    assert store.get_match("m1").status is MatchStatus.FINISHED
    store.close()


def test_a_second_match_for_a_finished_slot_is_refused_and_not_finished(tmp_path):
    store = store_with_slot(tmp_path)
    store.create_match(match("m1"))
    store.create_match(match("m2"))
    store.finish_match("m1", **finish_kwargs(), slot=("t", 0))
    with pytest.raises(SlotTakenError):
        store.finish_match("m2", **finish_kwargs(), slot=("t", 0))
    assert store.get_match("m2").status is MatchStatus.RUNNING  # nothing written
    assert store.get_schedule("t")[0].match_id == "m1"
    store.close()


def test_a_refused_finish_leaves_the_slot_open(tmp_path):
    store = store_with_slot(tmp_path)
    store.create_match(match("m1"))
    store.abort_match("m1", "gone")
    with pytest.raises(Exception):
        store.finish_match("m1", **finish_kwargs(), slot=("t", 0))
    assert store.get_schedule("t")[0].match_id is None
    store.close()
