"""Both stores, SQLite and PostgreSQL, keep every promise of the Store interface."""

from __future__ import annotations


import pytest

from arena.storage.base import (
    AlreadyExistsError,
    MatchStatus,
    NotFoundError,
    ScheduledMatch,
    SeatFaults,
    StorageError,
    TournamentRecord,
    TournamentStatus,
)
from arena.storage.schema import SCHEMA_VERSION

from .helpers import FAULTS, LATENCY, RESULT, REVEAL, events, finish_kwargs, match, read_while_writing


# -- opening, schema -----------------------------------------------------------

def test_reopening_keeps_data_and_does_not_migrate_again(open_at):
    s = open_at()
    s.add_bot("ann", "h1")
    s.close()
    s = open_at()
    assert s.get_bot("ann").token_hash == "h1"
    assert s.schema_version() == SCHEMA_VERSION
    s.close()


def test_a_database_from_a_newer_arena_is_refused(open_at):
    s = open_at()
    with s.db.tx() as db:
        db.execute("UPDATE schema_version SET version = 99")
    s.close()
    with pytest.raises(StorageError, match="schema version 99"):
        open_at()


def test_a_closed_store_refuses_calls(open_at):
    s = open_at()
    s.close()
    s.close()  # idempotent
    with pytest.raises(StorageError, match="closed"):
        s.add_bot("ann", None)
    with pytest.raises(StorageError, match="closed"):
        s.list_bots()


def test_constraints_are_enforced(store):
    with pytest.raises(store.db.integrity_error):  # foreign keys hold
        with store.db.tx() as db:
            db.execute("INSERT INTO events VALUES ('nope', 0, 0, '{}')")


# -- bots ----------------------------------------------------------------------

def test_bots_are_added_found_rotated_and_removed(store):
    ann = store.add_bot("ann", "h1", owner="Ann")
    assert ann.kind == "remote" and not ann.removed and ann.owner == "Ann"
    assert store.get_bot("ann") == ann
    assert store.find_bot_by_token_hash("h1") == ann
    assert store.get_bot("nobody") is None and store.find_bot_by_token_hash("zz") is None
    store.set_token_hash("ann", "h2")
    assert store.find_bot_by_token_hash("h1") is None
    assert store.find_bot_by_token_hash("h2").name == "ann"
    store.remove_bot("ann")
    assert store.get_bot("ann").removed
    assert store.find_bot_by_token_hash("h2") is None  # a removed bot cannot log in


def test_bot_errors(store):
    store.add_bot("ann", "h1")
    with pytest.raises(AlreadyExistsError, match="name"):
        store.add_bot("ann", "h9")
    with pytest.raises(AlreadyExistsError, match="token"):
        store.add_bot("bob", "h1")
    store.add_bot("bob", "h2")
    with pytest.raises(AlreadyExistsError):
        store.set_token_hash("bob", "h1")
    with pytest.raises(NotFoundError):
        store.set_token_hash("zed", "h3")
    with pytest.raises(NotFoundError):
        store.remove_bot("zed")


def test_ensure_bot_creates_once_and_lists_by_name(store):
    house = store.ensure_bot("house-1", kind="house")
    assert house.token_hash is None and house.kind == "house"
    assert store.ensure_bot("house-1", kind="remote") == house  # existing one is kept
    store.add_bot("ann", None)
    assert [b.name for b in store.list_bots()] == ["ann", "house-1"]


# -- matches -------------------------------------------------------------------

def test_a_match_lives_running_then_finished(store):
    store.create_match(match("m1"))
    got = store.get_match("m1")
    assert got.status is MatchStatus.RUNNING and got.result is None
    assert got.players == ["ann", "bob", "cid", "dan", "eve"] and got.seed == "s:0"
    assert got.rules == {"max_hands": 200}
    store.append_events("m1", events(0, 3))
    store.append_events("m1", events(3, 2))
    store.finish_match("m1", **finish_kwargs(1234.5))
    got = store.get_match("m1")
    assert got.status is MatchStatus.FINISHED and got.finished_at == 1234.5
    assert got.result == RESULT and got.reveal == REVEAL
    assert got.faults == FAULTS and got.latency_ms == LATENCY
    assert store.get_events("m1") == events(0, 5)
    assert store.get_events("m1", after_seq=2) == events(3, 2)
    assert store.get_events("m1", after_seq=4) == []


def test_match_ids_are_unique(store):
    store.create_match(match("m1"))
    with pytest.raises(AlreadyExistsError, match="m1"):
        store.create_match(match("m1"))


def test_unknown_matches_are_not_found(store):
    for call in (lambda: store.get_match("x"), lambda: store.get_events("x"),
                 lambda: store.append_events("x", events(0, 1)),
                 lambda: store.finish_match("x", **finish_kwargs()),
                 lambda: store.abort_match("x", "why")):
        with pytest.raises(NotFoundError, match="'x'"):
            call()


def test_events_must_continue_the_log(store):
    store.create_match(match("m1"))
    with pytest.raises(StorageError, match="expected 0"):
        store.append_events("m1", events(1, 2))
    store.append_events("m1", events(0, 2))
    with pytest.raises(StorageError, match="seq 1 does not continue.*expected 2"):
        store.append_events("m1", events(1, 2))  # a repeat
    with pytest.raises(StorageError, match="expected 3"):
        store.append_events("m1", events(2, 1) + events(4, 1))  # a gap inside the batch
    assert [e.seq for e in store.get_events("m1")] == [0, 1]  # refused batches left nothing
    store.append_events("m1", [])  # nothing to do


def test_a_closed_log_takes_no_more_events(store):
    store.create_match(match("m1"))
    store.finish_match("m1", **finish_kwargs())
    with pytest.raises(StorageError, match="finished; its log is closed"):
        store.append_events("m1", events(0, 1))


def test_append_events_many_keeps_good_batches_and_reports_bad_ones(store):
    store.create_match(match("m1"))
    store.create_match(match("m2"))
    failed = store.append_events_many({"m1": events(0, 3), "m2": events(5, 1)})
    assert list(failed) == ["m2"] and "expected 0" in str(failed["m2"])
    assert len(store.get_events("m1")) == 3 and store.get_events("m2") == []


def test_only_a_running_match_can_be_finished(store):
    store.create_match(match("m1"))
    store.finish_match("m1", **finish_kwargs())
    with pytest.raises(StorageError, match="finished, not running"):
        store.finish_match("m1", **finish_kwargs())
    store.create_match(match("m2"))
    store.abort_match("m2", "table closed")
    with pytest.raises(StorageError, match="aborted, not running"):
        store.finish_match("m2", **finish_kwargs())


def test_finish_checks_one_record_per_seat(store):
    store.create_match(match("m1"))
    kwargs = finish_kwargs() | {"faults": FAULTS[:4]}
    with pytest.raises(StorageError, match="5 seats"):
        store.finish_match("m1", **kwargs)
    assert store.get_match("m1").status is MatchStatus.RUNNING  # nothing half-written


def test_abort_keeps_faults_and_never_withdraws_a_result(store):
    store.create_match(match("m1"))
    store.abort_match("m1", "everyone left", faults=[SeatFaults(disconnects=1)] * 5)
    got = store.get_match("m1")
    assert got.status is MatchStatus.ABORTED and got.abort_reason == "everyone left"
    assert got.faults == [SeatFaults(disconnects=1)] * 5 and got.finished_at is not None
    store.abort_match("m1", "again")  # no-op
    assert store.get_match("m1").abort_reason == "everyone left"
    store.create_match(match("m2"))
    store.finish_match("m2", **finish_kwargs())
    with pytest.raises(StorageError, match="finished; it cannot be aborted"):
        store.abort_match("m2", "too late")


def test_abort_unfinished_marks_only_running_matches(store):
    for i in range(4):
        store.create_match(match(f"m{i}", started_at=1000.0 + i))
    store.finish_match("m1", **finish_kwargs())
    store.abort_match("m3", "earlier")
    assert store.abort_unfinished() == ["m0", "m2"]
    assert store.get_match("m0").abort_reason == "server restarted"
    assert store.get_match("m1").status is MatchStatus.FINISHED
    assert store.get_match("m3").abort_reason == "earlier"
    assert store.abort_unfinished() == []


def _seed_matches(store):
    """m0..m9; even ones in tournament t; m0..m5 finished; cid plays m7 only."""
    for i in range(10):
        players = ["ann", "bob", "cid", "dan", "eve"] if i == 7 else ["ann", "bob", "dan",
                                                                        "eve", "fay"]
        store.create_match(match(f"m{i}", started_at=1000.0 + i, players=players,
                                 tournament_id="t" if i % 2 == 0 else None))
        if i < 6:
            store.finish_match(f"m{i}", **finish_kwargs(2000.0 + i))


def test_list_matches_is_newest_first_with_filters_and_pages(store):
    _seed_matches(store)
    ids = lambda ms: [m.id for m in ms]  # noqa: E731
    assert ids(store.list_matches()) == [f"m{i}" for i in range(9, -1, -1)]
    assert ids(store.list_matches(limit=3, offset=2)) == ["m7", "m6", "m5"]
    assert ids(store.list_matches(bot="cid")) == ["m7"]
    assert ids(store.list_matches(tournament_id="t")) == ["m8", "m6", "m4", "m2", "m0"]
    assert ids(store.list_matches(status=MatchStatus.RUNNING)) == ["m9", "m8", "m7", "m6"]
    assert ids(store.list_matches(bot="fay", tournament_id="t",
                                  status=MatchStatus.FINISHED)) == ["m4", "m2", "m0"]
    assert store.list_matches(bot="nobody") == []
    assert store.count_matches() == 10
    assert store.count_matches(bot="ann") == 10 and store.count_matches(bot="fay") == 9
    assert store.count_matches(tournament_id="t", status=MatchStatus.FINISHED) == 3
    listed = store.list_matches(status=MatchStatus.FINISHED, limit=1)[0]
    assert listed.reveal is None and listed.result == RESULT and listed.latency_ms == LATENCY
    with pytest.raises(StorageError):
        store.list_matches(limit=-1)


def test_a_bot_seated_twice_lists_the_match_once(store):
    store.create_match(match("m1", players=["ann", "ann", "bob", "cid", "dan"]))
    assert [m.id for m in store.list_matches(bot="ann")] == ["m1"]
    assert store.count_matches(bot="ann") == 1


def test_finished_matches_are_oldest_first(store):
    _seed_matches(store)
    assert [m.id for m in store.finished_matches()] == [f"m{i}" for i in range(6)]
    assert [m.id for m in store.finished_matches(tournament_id="t", bot="fay")] == [
        "m0", "m2", "m4"]


# -- tournaments ---------------------------------------------------------------

def _tournament(tid="t1", created_at=10.0):
    return TournamentRecord(id=tid, name="Spring cup", game="muushig", config={"seed": 7},
                            status=TournamentStatus.PENDING, created_at=created_at)


def _schedule(tid="t1", n=3):
    return [ScheduledMatch(tournament_id=tid, slot=i, players=[f"b{i}"] * 5, seed=f"7:{i}",
                           extra={"table": i, "rotation": 0}) for i in range(n)]


def test_a_tournament_and_its_schedule(store):
    store.create_tournament(_tournament(), _schedule())
    store.create_tournament(_tournament("t2", 20.0), [])
    assert store.get_tournament("t1").config == {"seed": 7}
    assert [t.id for t in store.list_tournaments()] == ["t2", "t1"]
    assert store.get_schedule("t1") == _schedule()
    assert store.get_schedule("t2") == []
    store.set_tournament_status("t1", TournamentStatus.RUNNING)
    assert store.get_tournament("t1").finished_at is None
    store.set_tournament_status("t1", TournamentStatus.FINISHED)
    t1 = store.get_tournament("t1")
    assert t1.status is TournamentStatus.FINISHED and t1.finished_at is not None


def test_slots_count_attempts_and_take_only_finished_matches(store):
    store.create_tournament(_tournament(), _schedule())
    store.note_attempt("t1", 1)
    store.note_attempt("t1", 1)
    store.create_match(match("m1", tournament_id="t1"))
    with pytest.raises(StorageError, match="not finished"):
        store.complete_slot("t1", 1, "m1")
    store.finish_match("m1", **finish_kwargs())
    store.complete_slot("t1", 1, "m1")
    slot = store.get_schedule("t1")[1]
    assert slot.attempts == 2 and slot.match_id == "m1"


def test_tournament_errors(store):
    store.create_tournament(_tournament(), _schedule())
    with pytest.raises(AlreadyExistsError):
        store.create_tournament(_tournament(), [])
    with pytest.raises(StorageError, match="belongs to tournament"):
        store.create_tournament(_tournament("t9"), _schedule("t1"))
    with pytest.raises(NotFoundError):
        store.get_tournament("t9")  # the refused one left nothing behind
    with pytest.raises(NotFoundError):
        store.get_schedule("t9")
    with pytest.raises(NotFoundError):
        store.set_tournament_status("t9", TournamentStatus.RUNNING)
    with pytest.raises(NotFoundError):
        store.note_attempt("t1", 99)
    store.create_match(match("m1"))
    store.finish_match("m1", **finish_kwargs())
    with pytest.raises(NotFoundError):
        store.complete_slot("t1", 99, "m1")
    with pytest.raises(NotFoundError):
        store.complete_slot("t1", 0, "nope")


# -- threads -------------------------------------------------------------------

def test_readers_on_other_threads_see_committed_writes_while_a_writer_runs(store):
    read_while_writing(store)


def test_an_event_that_is_not_json_is_refused_clearly(store):
    from arena.storage.base import StoredEvent

    store.create_match(match("m1"))
    with pytest.raises(StorageError, match="seq 0 is not plain JSON"):
        store.append_events("m1", [StoredEvent(seq=0, at=1.0, data={"x": object()})])
    failed = store.append_events_many({"m1": [StoredEvent(seq=0, at=1.0,
                                                          data={"x": float("nan")})]})
    assert "not plain JSON" in str(failed["m1"])
    assert store.get_events("m1") == []
