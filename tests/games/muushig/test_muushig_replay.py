"""A stored match re-runs exactly from its record."""

import pytest

from arena.games.base import NotYourTurnError
from arena.games.muushig import ReplayError, inputs_from_record, replay, replay_record

from .differential import run_engine


@pytest.mark.parametrize("rules", [None, {"players": 3, "auto_enter_after_folds": 3}])
def test_replaying_the_record_gives_the_same_events_and_result(rules):
    engine, _, records = run_engine(77, rules)
    # the server mixes its own records into the log; they are skipped
    log = [{"kind": "commit", "round": 0, "hand": 0, "commitment": "ab"}] + records
    log.insert(5, {"kind": "action", "seat": 1, "phase": "decide", "action": "fold", "source": "bot"})
    again = replay_record(rules, log)
    assert again.finished and again.result() == engine.result()
    assert again.deals() == engine.deals()


def test_replay_events_are_identical():
    engine, steps, records = run_engine(5)
    decks, actions = inputs_from_record(records)
    assert actions == [a for _, _, _, a in steps]
    again = replay(None, decks, [])
    first = [e.for_record() for e in again._deal_events]  # white-box: same first deal
    assert first == [records[1]]


def test_replay_refuses_actions_after_the_end_and_missing_decks():
    engine, steps, records = run_engine(6)
    decks, actions = inputs_from_record(records)
    with pytest.raises(ReplayError):
        replay(None, decks, actions + ["fold"])
    short = replay(None, decks[:1], [])
    with pytest.raises(Exception, match="no deck left"):
        while True:
            short.play(short.default_action())
    finished = replay(None, decks, actions)
    with pytest.raises(NotYourTurnError, match="over"):
        finished.play("fold")
    with pytest.raises(NotYourTurnError):
        finished.default_action()


def test_public_log_cannot_be_replayed():
    _, _, records = run_engine(8)
    public = [dict(r) for r in records]
    for r in public:
        r.pop("discarded", None)
    with pytest.raises(ReplayError, match="for_record"):
        inputs_from_record(public)
