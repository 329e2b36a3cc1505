"""An event's stored text is its record, encoded: ``record_text()`` writes
the JSON itself (it is faster than the encoder), and must give exactly the
text ``encode_record(for_record())`` gives, for every kind of event, over
random play with every variant of the rules."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.games.muushig import events as muushig_events
from arena.games.muushig.events import (
    AllFolded,
    Decision,
    Exchange,
    HandEnd,
    MuushigEvent,
    RoundEnd,
    RoundStart,
    Take,
    Trick,
)
from arena.records import encode_record
from arena.server.session_output import ServerEvent, record_text

from .helpers import RULES, random_match_events

EVENT_CLASSES = {cls for cls in vars(muushig_events).values()
                 if isinstance(cls, type) and issubclass(cls, MuushigEvent) and cls is not MuushigEvent}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=RULES, seed=st.integers(0, 2**32 - 1))
def test_every_event_writes_the_text_its_record_encodes_to(rules, seed):
    for event in random_match_events(rules, seed):
        assert event.record_text() == encode_record(event.for_record()), event


def test_random_matches_show_every_kind_of_event():
    # What the property above covers: every event class of the game.
    seen = set()
    for seed in range(40):
        seen |= {type(e) for e in random_match_events({"players": 5}, seed)}
    assert seen == EVENT_CLASSES


def test_every_kind_of_event_writes_its_own_text():
    # None of them falls back to the encoder (which would be correct, only slow).
    for cls in EVENT_CLASSES:
        assert "record_text" in vars(cls), cls.__name__


def test_edge_values_are_written_as_the_encoder_writes_them():
    events = [
        RoundStart(0, 4, (-15, 0, 15, 123456789012, 7)),
        HandEnd((0, 0, 0, 0, 0), (), (15, 15, 15, 15, 15)),
        HandEnd((5,), (1, 2, 3), (-3,)),
        RoundEnd(4, 0, (0,)),
        AllFolded(2, ()),
        Trick(3, (), (1, 2)),
        Exchange(1, 0, ()),
        Take(0, None),
        Take(4, 31),
        Decision(2, "enter", True),
        Decision(0, 'fold "quoted" \\ \u00e9 \x7f', False),
    ]
    for event in events:
        text = event.record_text()
        assert text == encode_record(event.for_record())
        assert json.loads(text) == event.for_record()


def test_the_server_writes_a_game_event_without_record_text_by_encoding_it():
    class Plain:
        kind = "plain"

        def for_record(self):
            return {"kind": "plain", "é": [1.5, None, True]}

    assert record_text(Plain()) == encode_record({"kind": "plain", "é": [1.5, None, True]})
    commit = ServerEvent("commit", round=0, hand=1, commitment="ab" * 32)
    assert record_text(commit) == encode_record(commit.for_record())
