"""A thirteen event's value is the facts it reports: its wire forms are
made once when first asked for and kept beside it, never in its fields, so
equality, ``repr`` and ``dataclasses.asdict`` see the same event whether or
not anyone has looked at it."""

from __future__ import annotations

import random
from dataclasses import asdict, fields

from arena.games.thirteen.engine import ThirteenEngine
from arena.games.thirteen.events import Arranged, Deal, DealStart, Showdown

from .test_thirteen_properties import _any


def _match_events(seed: int, players: int) -> list:
    rng = random.Random(seed)
    engine = ThirteenEngine({"deals": 2, "players": players}, random.Random(seed))
    events = engine.start()
    while not engine.finished:
        for seat in engine.to_act:
            events += engine.play_for(seat, _any(engine, seat, rng))
    return events


def _look(event, players: int) -> None:
    event.for_record(), event.for_public()
    for seat in range(-1, players + 1):
        event.for_seat(seat)
    if isinstance(event, Showdown):
        event.sealed_for_public()
        for seat in range(players):
            event.sealed_for_seat(seat)
    if isinstance(event, Deal):
        event.deal


def test_every_field_of_an_event_is_a_fact_it_reports():
    for cls in (Deal, DealStart, Arranged, Showdown):
        assert all(f.compare and f.repr for f in fields(cls)), cls.__name__


def test_looking_at_an_event_does_not_change_its_value():
    for seed, players in ((1, 2), (2, 3), (3, 4)):
        for event in _match_events(seed, players):
            value, text = asdict(event), repr(event)
            twin = type(event)(**{f.name: getattr(event, f.name) for f in fields(event) if f.init})
            _look(event, players)
            assert asdict(event) == value and repr(event) == text
            assert event == twin and hash(event) == hash(twin)


def test_a_public_event_gives_every_seat_and_spectators_one_dict():
    for event in _match_events(4, 4):
        if isinstance(event, Arranged):
            first = event.for_seat(0)
            assert all(event.for_seat(s) is first for s in range(4)) and event.for_public() is first
            assert event.for_record() is not first and event.for_record()["seat"] == event.seat
        if isinstance(event, DealStart):
            assert event.for_seat(0) is event.for_seat(0) and event.for_seat(4) is None


def _state_of(engine: ThirteenEngine) -> dict:
    """Every plain value the engine holds (attributes and properties)."""
    plain = (int, str, bool, float, list, tuple, dict, type(None))
    return {name: getattr(engine, name) for name in dir(engine)
            if not name.startswith("__") and isinstance(getattr(engine, name), plain)}


def test_asking_for_defaults_and_views_leaves_the_engine_state_as_an_unwatched_twins():
    # The house arrangement is a search worth keeping for a deal's later
    # asks; it is kept beside the engine (a memo of a pure function), so
    # the engine's state is the game's whatever was asked.
    for seed, players in ((5, 2), (6, 4)):
        watched = ThirteenEngine({"deals": 2, "players": players}, random.Random(seed))
        unwatched = ThirteenEngine({"deals": 2, "players": players}, random.Random(seed))
        watched.start(), unwatched.start()
        rng = random.Random(seed)
        while not unwatched.finished:
            for seat in watched.to_act:
                watched.default_for(seat), watched.observation(seat)
            assert _state_of(watched) == _state_of(unwatched)
            seat = unwatched.to_act[0]
            action = _any(unwatched, seat, rng)
            assert watched.play_for(seat, action) == unwatched.play_for(seat, action)
        assert _state_of(watched) == _state_of(unwatched)
