"""Gauntlet tournaments played end to end with sample and house bots, on
SQLite and on PostgreSQL: deck set by deck set until the stopping rule
decides, a kill in the middle of a deck set resumed into the same sets, the
stored sets checked by ``arena verify``, and the result in the API."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.storage import open_store
from arena.storage.base import MatchStatus, Store, TournamentStatus
from arena.tournament.config import load_config
from arena.tournament.gauntlet import Verdict, decide
from arena.tournament.gauntlet_play import (gauntlet_result, outcome_of_set, sets_of,
                                            stopping_rule, stored_matches)
from arena.tournament.verify import verify_tournament
from tests.storage.conftest import db_location  # noqa: F401 - fixtures
from tests.tournament_run.helpers import (play, play_until_killed, resume, sample_entrant,
                                          stored_schedule, write_config)

# The heuristic sample bot against two random ones; house bots fill the
# other two seats of each five-seat table. A loose rule (alpha 0.1, effect
# 0.45) stops after five won deck sets: a short test, a real decision.
GAUNTLET = ('[schedule]\nkind = "gauntlet"\nchallenger = "champ"\nmax_sets = 12\n'
            'alpha = 0.1\neffect = 0.45\n')
ENTRANTS = (sample_entrant("champ", "python_heuristic") + sample_entrant("r1")
            + sample_entrant("r2"))


def check_stopped_by_the_rule(store: Store, path: Path, tid: str) -> None:
    """Every stored deck set was played; the rule, asked after each, went on
    until the last and stopped there."""
    config = load_config(path)
    schedule = store.get_schedule(tid)
    matches = stored_matches(store, tid)
    sets = list(sets_of(schedule).values())
    assert all(len(slots) == 5 and len({s.seed for s in slots}) == 1 for slots in sets)
    assert len({slots[0].seed for slots in sets}) == len(sets)  # new decks every set
    outcomes = [outcome_of_set(config, slots, matches) for slots in sets]
    rule = stopping_rule(config)
    verdicts = [decide(outcomes[:k].count(1), outcomes[:k].count(-1), outcomes[:k].count(0),
                       rule).verdict for k in range(1, len(sets) + 1)]
    assert verdicts[-1] is not Verdict.CONTINUE
    assert all(v is Verdict.CONTINUE for v in verdicts[:-1])
    finished = store.list_matches(tournament_id=tid, status=MatchStatus.FINISHED, limit=1000)
    assert {m.id for m in finished} == {s.match_id for s in schedule}  # nothing counted twice
    result = gauntlet_result(store, config, tid)
    assert result is not None and result["verdict"] == verdicts[-1].value
    assert result["deck_sets"] == len(sets)
    assert {row["opponent"] for row in result["opponents"]} == {"r1", "r2"}


# One gauntlet per backend, killed two matches into its second deck set and
# resumed: it plays deck set by deck set until the rule decides (the sets
# before the kill kept), and its verdict and ``arena verify`` are those of a
# run that was never stopped.
@pytest.mark.timeout(240)
async def test_a_kill_in_the_middle_of_a_deck_set_resumes_into_the_same_sets(
        db_location, tmp_path, monkeypatch):
    path = write_config(tmp_path, ENTRANTS, extra=GAUNTLET)
    # Killed two matches into the second deck set.
    await play_until_killed(path, db_location, monkeypatch, finishes=7)

    before = stored_schedule(db_location)
    assert sorted(sets_of(before)) == [1, 2]  # the third set is not added yet
    assert sum(1 for s in before if s.match_id) == 7

    store, tid = await resume(path, db_location, before)
    assert store.get_tournament(tid).status is TournamentStatus.FINISHED
    after = store.get_schedule(tid)
    assert [s.match_id for s in after[:5]] == [s.match_id for s in before[:5]]  # kept
    check_stopped_by_the_rule(store, path, tid)
    # The heuristic bot against random ones: found better well before the cap.
    result = gauntlet_result(store, load_config(path), tid)
    assert result is not None and result["verdict"] == "better", result
    assert result["deck_sets"] < 12
    report = verify_tournament(store, tid)
    assert report.ok, report.summary()
    store.close()


async def test_verify_reports_a_deck_set_played_after_the_rule_had_decided(tmp_path):
    import json
    import sqlite3

    path = write_config(tmp_path, ENTRANTS, extra=GAUNTLET.replace("max_sets = 12",
                                                                   "max_sets = 2"))
    db = tmp_path / "a.db"
    store, tid, complete = await play(path, db)
    assert complete and len(sets_of(store.get_schedule(tid))) == 2  # the cap
    store.close()
    # An organiser who lowers the cap afterwards to hide the second set.
    with sqlite3.connect(db) as conn:
        [raw] = conn.execute("SELECT config FROM tournaments WHERE id = ?", (tid,)).fetchone()
        wire = json.loads(raw)
        wire["schedule"]["max_sets"] = 1
        conn.execute("UPDATE tournaments SET config = ? WHERE id = ?", (json.dumps(wire), tid))
    report = verify_tournament(open_store(str(db)), tid)
    assert any("deck set 2 was played after the stopping rule had decided" in p
               for p in report.problems), report.summary()
