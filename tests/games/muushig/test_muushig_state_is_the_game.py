"""The game state holds the game only: looking at a match (observations,
legal lists, defaults, event forms) changes nothing a copy, a comparison or
a serialisation of the state would see. Two engines given the same decks
and the same answers hold the same state, however much one was looked at."""

from __future__ import annotations

import random
from dataclasses import asdict, fields, is_dataclass
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.games.muushig import MuushigEngine
from arena.games.muushig.state import HandState

from .helpers import RULES


def state_of(engine: MuushigEngine) -> dict[str, Any]:
    """Every value the engine holds (its attributes, properties included):
    plain values as they are, dataclasses (the hand, the options) as dicts.
    Objects with behaviour of their own (the wire face, the deck source)
    and methods are not values and are left out."""
    plain = (int, str, bool, float, list, tuple, dict, type(None))
    out: dict[str, Any] = {}
    for name in dir(engine):
        if name.startswith("__"):
            continue
        value = getattr(engine, name)
        if is_dataclass(value) and not isinstance(value, type):
            out[name] = asdict(value)
        elif isinstance(value, plain):
            out[name] = value
    return out


def look_at_everything(engine: MuushigEngine) -> None:
    for seat in range(engine.n_seats):
        engine.observation(seat)
    if engine.current_seat is not None:
        engine.legal_actions()
        engine.default_action()
        engine.check_action(engine.default_action())


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=RULES, seed=st.integers(0, 2**32 - 1))
def test_looking_at_a_match_leaves_its_state_as_an_unwatched_twins(rules, seed):
    watched = MuushigEngine(rules, random.Random(seed))
    unwatched = MuushigEngine(rules, random.Random(seed))
    watched_events, unwatched_events = watched.start(), unwatched.start()
    choice = random.Random(seed + 1).choice
    while not unwatched.finished:
        look_at_everything(watched)
        for event in watched_events:  # every form of every event, as the server asks
            event.for_record(), event.for_public()
            for seat in range(watched.n_seats):
                event.for_seat(seat)
        assert state_of(watched) == state_of(unwatched)
        action = choice(unwatched.legal_actions())
        watched_events = watched.play(action)
        unwatched_events = unwatched.play(action)
        assert watched_events == unwatched_events
    assert state_of(watched) == state_of(unwatched)


def test_a_hand_state_has_fields_for_the_game_alone():
    # Every field is compared: none is a cache that == must be told to skip.
    assert all(f.compare and f.repr for f in fields(HandState))
