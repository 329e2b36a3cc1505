"""The engine honours the game-neutral interface the server relies on."""

import random

import pytest

from arena.games import get_game
from arena.games.base import GameEngine, GameError, GameEvent, NotYourTurnError
from arena.games.muushig import MuushigEngine

from .helpers import act


def test_registry_spec_builds_an_engine_of_the_interface():
    spec = get_game("muushig")
    engine = spec.new_match(None, random.Random(0), None)
    assert isinstance(engine, GameEngine) and engine.game == "muushig" and engine.n_seats == 5
    events = engine.start()
    assert all(isinstance(e, GameEvent) for e in events)
    assert [e.kind for e in events] == ["round_start", "deal", "hand_start"]
    assert engine.current_seat == 1 and engine.phase == "decide"


def test_misuse_before_start_and_after_the_end():
    engine = MuushigEngine(None, random.Random(0))
    with pytest.raises(NotYourTurnError, match="not started"):
        engine.play("fold")
    with pytest.raises(GameError, match="not finished"):
        engine.result()
    engine.start()
    with pytest.raises(GameError, match="already started"):
        engine.start()
    while not engine.finished:
        act(engine, engine.default_action())
    with pytest.raises(NotYourTurnError, match="over"):
        engine.check_action("fold")
    assert engine.legal_codes() == () and engine.legal_actions() == []


def test_observation_has_the_protocol_fields():
    engine = MuushigEngine(None, random.Random(3))
    engine.start()
    obs = engine.observation(engine.current_seat)
    for key in ("round", "hand", "dealer", "seat", "trump", "face_up", "cards", "scores", "stars", "status",
                "stock", "face_up_taken", "trick", "leader", "tricks", "played"):
        assert key in obs
    assert obs["status"] == ["waiting"] * 5 and obs["leader"] is None and obs["stock"] == 6
    with pytest.raises(GameError, match="no seat 7"):
        engine.observation(7)


def test_legal_actions_cannot_be_corrupted_by_the_caller():
    engine = MuushigEngine(None, random.Random(3))
    engine.start()
    engine.legal_actions().clear()
    assert engine.legal_actions() == ["enter", "fold"]


def test_fast_codes_follow_the_wire_order():
    by_wire = MuushigEngine(None, random.Random(4))
    by_code = MuushigEngine(None, random.Random(4))
    assert [e.for_record() for e in by_wire.start()] == [e.for_record() for e in by_code.start()]
    pick = random.Random(5)
    while not by_wire.finished:
        wire, codes = by_wire.legal_actions(), by_code.legal_codes()
        assert len(wire) == len(codes)
        i = pick.randrange(len(codes))
        a = [e.for_record() for e in by_wire.play(wire[i])]
        b = [e.for_record() for e in by_code.apply_code(codes[i])]
        assert a == b
    assert by_code.finished and by_code.result() == by_wire.result()
