"""A kill in the window between a match's finish and its slot's completion
must not count the match twice after a resume."""

from __future__ import annotations

import pytest

from arena.storage.base import MatchStatus
from arena.storage.writer import StoreWriter
from tests.tournament_run.helpers import play, sample_entrant, write_config


class Killed(BaseException):
    """Stands for SIGKILL: nothing after this point runs."""


async def test_a_kill_right_after_a_finish_commit_neither_loses_nor_repeats_the_match(
        tmp_path, monkeypatch):
    path = write_config(tmp_path, sample_entrant("r"))
    db = tmp_path / "a.db"
    original = StoreWriter.finish_match
    finished = 0

    async def finish_then_die(self, *args, **kwargs):
        nonlocal finished
        await original(self, *args, **kwargs)
        finished += 1
        if finished == 2:  # the fault-injection point: the finish is durable, then death
            raise Killed

    monkeypatch.setattr(StoreWriter, "finish_match", finish_then_die)
    with pytest.raises(Killed):
        await play(path, db)
    monkeypatch.undo()

    store, tid, complete = await play(path, db)  # resume
    assert complete
    schedule = store.get_schedule(tid)
    finished_matches = store.list_matches(tournament_id=tid, status=MatchStatus.FINISHED,
                                          limit=100)
    assert len(finished_matches) == len(schedule) == 5
    assert {m.id for m in finished_matches} == {s.match_id for s in schedule}
    store.close()
