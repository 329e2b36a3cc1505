"""Swiss tournaments played end to end with sample and house bots: rounds
paired from the standings, one deck set per round, a kill mid-round resumed,
and every deck verified afterwards."""

from __future__ import annotations

import pytest

from arena.storage.sqlite import SqliteStore
from arena.storage.base import MatchStatus, TournamentStatus
from arena.tournament.swiss import rounds_of, tables_of
from arena.tournament.verify import verify_tournament
from tests.tournament_run.helpers import (play, play_until_killed, resume, sample_entrant,
                                          stored_schedule, write_config)

SWISS = '[schedule]\nkind = "swiss"\nrounds = 3\n[rules]\nplayers = 2\n'
# Five entrants at tables of two: three tables a round, one seat for a house bot.
ENTRANTS = (sample_entrant("h1", "python_heuristic") + sample_entrant("h2", "python_heuristic")
            + sample_entrant("r1") + sample_entrant("r2") + sample_entrant("r3"))


def check_rounds(store, tid: str) -> None:
    schedule = store.get_schedule(tid)
    rounds = rounds_of(schedule)
    assert sorted(rounds) == [1, 2, 3]
    for number, slots in rounds.items():
        assert len(slots) == 6 and all(s.match_id for s in slots)
        assert len({s.seed for s in slots}) == 1  # every table of the round: the same decks
        seated = sorted(p for t in tables_of(slots) for p in t)
        assert seated == sorted(["h1", "h2", "r1", "r2", "r3", "house-heuristic-1"])
    assert len({slots[0].seed for slots in rounds.values()}) == 3  # a new deck set each round
    finished = store.list_matches(tournament_id=tid, status=MatchStatus.FINISHED, limit=100)
    assert {m.id for m in finished} == {s.match_id for s in schedule}  # nothing counted twice


async def test_a_swiss_tournament_plays_its_rounds_and_verifies(tmp_path):
    path = write_config(tmp_path, ENTRANTS, extra=SWISS)
    store, tid, complete = await play(path, tmp_path / "a.db")
    assert complete and store.get_tournament(tid).status is TournamentStatus.FINISHED
    check_rounds(store, tid)
    report = verify_tournament(store, tid)
    assert report.ok, report.summary()
    assert report.matches == 18
    store.close()


async def test_verify_reports_a_round_not_paired_by_the_rule(tmp_path):
    import json
    import sqlite3

    path = write_config(tmp_path, ENTRANTS, extra=SWISS)
    store, tid, _ = await play(path, tmp_path / "a.db")
    store.close()
    second = rounds_of(SqliteStore(tmp_path / "a.db").get_schedule(tid))[2]
    a, b = second[0], second[2]  # rotation 0 of the round's first and second tables
    swapped = [a.players[0], b.players[0]]
    with sqlite3.connect(tmp_path / "a.db") as db:  # an organiser who seats a friend higher
        db.execute("UPDATE schedule SET players = ? WHERE tournament_id = ? AND slot = ?",
                   (json.dumps(swapped), tid, a.slot))
    report = verify_tournament(SqliteStore(tmp_path / "a.db"), tid)
    assert any(p.startswith("round 2:") for p in report.problems), report.summary()


async def test_a_kill_in_the_middle_of_round_two_resumes_into_the_same_rounds(
        tmp_path, monkeypatch):
    path = write_config(tmp_path, ENTRANTS, extra=SWISS)
    db = tmp_path / "a.db"
    await play_until_killed(path, db, monkeypatch, finishes=8)  # two matches into round two

    before = stored_schedule(db)
    assert sorted(rounds_of(before)) == [1, 2]  # round three is not paired yet
    assert sum(1 for s in before if s.match_id) == 8

    store, tid = await resume(path, db, before)  # the rounds paired before kept as they were
    check_rounds(store, tid)
    assert verify_tournament(store, tid).ok
    store.close()


def test_until_separated_on_the_command_line_is_refused_for_swiss(tmp_path):
    from arena.cli import _parser
    from arena.tournament.command import TournamentCommandError, _load

    path = write_config(tmp_path, ENTRANTS, extra=SWISS)
    args = _parser().parse_args(["tournament", str(path), "--db", str(tmp_path / "a.db"),
                                 "--until-separated"])
    store = SqliteStore(tmp_path / "a.db")
    with pytest.raises(TournamentCommandError, match="fixed number of rounds"):
        _load(args, store)
    assert store.list_tournaments() == []
    store.close()
