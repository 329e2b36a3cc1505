"""A kill in the window between a match's finish and its slot's completion
must not count the match twice after a resume."""

from __future__ import annotations

from arena.storage.base import MatchStatus
from tests.tournament_run.helpers import play, play_until_killed, sample_entrant, write_config


async def test_a_kill_right_after_a_finish_commit_neither_loses_nor_repeats_the_match(
        tmp_path, monkeypatch):
    path = write_config(tmp_path, sample_entrant("r"))
    db = tmp_path / "a.db"
    # The fault-injection point: the second finish is durable, then death.
    await play_until_killed(path, db, monkeypatch, finishes=2)

    store, tid, complete = await play(path, db)  # resume
    assert complete
    schedule = store.get_schedule(tid)
    finished_matches = store.list_matches(tournament_id=tid, status=MatchStatus.FINISHED,
                                          limit=100)
    assert len(finished_matches) == len(schedule) == 5
    assert {m.id for m in finished_matches} == {s.match_id for s in schedule}
    store.close()
