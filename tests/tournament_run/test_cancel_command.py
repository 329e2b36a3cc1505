"""``arena tournament cancel ID``: the organiser stops a tournament from a
terminal, on either backend; ``arena tournament resume ID`` takes it up."""

from __future__ import annotations

import argparse
import time

from arena.cli import main
from arena.storage import open_store
from arena.storage.base import TournamentRecord, TournamentStatus
from arena.tournament.command import _load
from arena.tournament.config import load_config
from arena.tournament.runner import create_or_load
from tests.storage.conftest import db_location  # noqa: F401 - fixtures
from tests.tournament_run.helpers import sample_entrant, write_config


def _status(db: str, tid: str) -> TournamentStatus:
    store = open_store(db)
    try:
        return store.get_tournament(tid).status
    finally:
        store.close()


def test_cancel_marks_it_cancelled_and_resume_takes_it_up(db_location, tmp_path, capsys):
    config = load_config(write_config(tmp_path, sample_entrant("r")))
    store = open_store(db_location)
    try:
        record, _ = create_or_load(store, config)
    finally:
        store.close()
    assert main(["tournament", "cancel", record.id, "--db", db_location]) == 0
    out = capsys.readouterr().out
    assert f"tournament {record.id} cancelled" in out and "arena tournament resume" in out
    assert _status(db_location, record.id) is TournamentStatus.CANCELLED
    assert main(["tournament", "cancel", record.id, "--db", db_location]) == 0
    assert "cancelled already" in capsys.readouterr().out
    # Resuming is the organiser's explicit wish: the tournament is open again.
    store = open_store(db_location)
    try:
        args = argparse.Namespace(config="resume", resume_id=record.id, db=db_location,
                                  secret=None, workers=1)
        _load(args, store)
        assert store.get_tournament(record.id).status is TournamentStatus.PENDING
    finally:
        store.close()


def test_cancel_refuses_an_unknown_or_finished_tournament(db_location, capsys):
    store = open_store(db_location)  # a store, without that tournament in it
    store.close()
    assert main(["tournament", "cancel", "nope", "--db", db_location]) == 2
    assert "no tournament 'nope'" in capsys.readouterr().err
    store = open_store(db_location)
    try:
        store.create_tournament(TournamentRecord(
            id="done", name="done", game="muushig", config={},
            status=TournamentStatus.FINISHED, created_at=time.time()), [])
    finally:
        store.close()
    assert main(["tournament", "cancel", "done", "--db", db_location]) == 2
    assert "is finished" in capsys.readouterr().err
    assert _status(db_location, "done") is TournamentStatus.FINISHED
