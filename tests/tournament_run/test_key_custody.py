"""One tournament, one deal key: the same on every node of a store, found
again after any stop, never replaced; and the id of a tournament depends on
what it is, not on the folder its file lies in."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import pytest

from arena.storage import open_store
from arena.storage.base import TournamentRecord, TournamentStatus
from arena.storage.deal_keys import DealKeyring
from arena.tournament.command import TournamentCommandError, _load
from arena.tournament.config import load_config, parse_config
from arena.tournament.errors import TournamentError
from arena.tournament.runner import create_or_load, tournament_id, tournament_key
from arena.tournament.verify import run_verify
from protocol.deals import key_commitment
from tests.storage.conftest import db_location  # noqa: F401 - fixtures
from tests.tournament_run.helpers import sample_entrant, write_config

REMOTE = {"name": "remote cup", "game": "muushig", "seed": 3,
          "limits": {"decision_ms": 1000, "bank_ms": 0},
          "entrant": [{"name": "north", "remote": True}, {"name": "south", "remote": True}]}


def _uncommitted_record(tid: str) -> TournamentRecord:
    """A tournament as it is stored before anyone drew its key (an HTTP
    tournament of an older arena: no commitment in its config)."""
    config = parse_config(REMOTE)
    return TournamentRecord(id=tid, name=config.name, game=config.game,
                            config=config.to_wire(), status=TournamentStatus.PENDING,
                            created_at=time.time())


def test_every_node_of_a_store_deals_an_uncommitted_tournament_from_one_key(db_location):
    stores = [open_store(db_location, node=f"node-{i}") for i in range(3)]
    try:
        stores[0].create_tournament(_uncommitted_record("cup"), [])
        keys = {tournament_key(store, store.get_tournament("cup")) for store in stores}
        assert len(keys) == 1
        (key,) = keys
        published = stores[2].get_tournament("cup").config["deals"]["commitment"]
        assert published == key_commitment(key)
    finally:
        for store in stores:
            store.close()
    again = open_store(db_location, node="node-0")  # a restarted node finds it
    try:
        assert tournament_key(again, again.get_tournament("cup")) == key
    finally:
        again.close()


def test_a_stopped_tournament_resumes_without_its_secret(db_location, tmp_path):
    config = load_config(write_config(tmp_path, sample_entrant("r")))
    store = open_store(db_location)
    record, created = create_or_load(store, config)
    key = tournament_key(store, record)
    store.close()  # the process stops: nothing of it stays in memory
    store = open_store(db_location)
    try:
        resumed, created_again = create_or_load(store, config)
        assert (created, created_again) == (True, False)
        assert resumed.id == record.id
        assert tournament_key(store, resumed) == key
    finally:
        store.close()


def test_resume_refuses_a_secret_that_is_not_the_tournaments_key(db_location, tmp_path):
    config = load_config(write_config(tmp_path, sample_entrant("r")))
    store = open_store(db_location)
    try:
        record, _ = create_or_load(store, config)
        key = tournament_key(store, record)
        args = argparse.Namespace(config="resume", resume_id=record.id, db=db_location,
                                  secret=bytes(32).hex(), workers=1)
        with pytest.raises(TournamentError, match="--secret"):
            _load(args, store)
        args.secret = key.hex()  # the right key is accepted
        assert _load(args, store)[1].id == record.id
    finally:
        store.close()


def test_a_second_key_is_never_kept_for_a_tournament(db_location):
    store = open_store(db_location)
    try:
        keyring = DealKeyring.for_store(store)
        first = keyring.create("cup")
        assert keyring.create("cup") == first  # drawn again: the kept one wins
        with pytest.raises(Exception, match="another deal key"):
            keyring.create("cup", bytes(32))
        assert keyring.load("cup") == first
    finally:
        store.close()


def test_the_same_file_in_two_folders_is_the_same_tournament(tmp_path):
    ids = set()
    for folder in ("alice", "bob"):
        (tmp_path / folder).mkdir()
        path = write_config(tmp_path / folder, '[[entrant]]\nname = "r"\n'
                                               'command = ["python", "bot.py"]\n')
        config = load_config(path)
        assert config.entrants[0].cwd == (tmp_path / folder).resolve()
        ids.add(tournament_id(config))
    assert len(ids) == 1


def test_a_tournament_an_older_arena_started_is_still_resumed(tmp_path):
    from arena.tournament.runner import legacy_tournament_id

    config = load_config(write_config(tmp_path, sample_entrant("r")))
    store = open_store(tmp_path / "a.db")
    try:
        old_id = legacy_tournament_id(config)
        store.create_tournament(TournamentRecord(
            id=old_id, name=config.name, game=config.game, config=config.to_wire(),
            status=TournamentStatus.RUNNING, created_at=time.time()), [])
        record, created = create_or_load(store, config)
        assert (record.id, created) == (old_id, False)
    finally:
        store.close()


def test_verify_opens_a_database_server_url(pg_url, capsys):
    store = open_store(pg_url)
    store.create_tournament(_uncommitted_record("cup"), [])
    store.close()
    code = run_verify(argparse.Namespace(tournament="cup", match=None, db=pg_url))
    err = capsys.readouterr().err
    assert "no database" not in err
    assert code == 1 and "not finished" in err  # it read the store: the cup is pending


def test_a_ladder_matchs_key_is_found_by_every_node_and_after_a_restart(db_location):
    """A ladder match's key, recorded once it is over, is kept with the store
    (beside a SQLite file, in a database server's deal_keys table), not in
    the memory of the node that played it."""
    key = bytes(range(32))
    playing = open_store(db_location, node="node-1")
    try:
        DealKeyring.for_store(playing).record_ladder_key("m-ladder-1", key)
    finally:
        playing.close()
    other = open_store(db_location, node="node-2")
    try:
        assert DealKeyring.for_store(other).ladder_key("m-ladder-1") == key
        assert DealKeyring.for_store(other).ladder_key("m-unknown") is None
    finally:
        other.close()
