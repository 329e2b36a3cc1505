"""Each kind of event is defined once: its record (everything, as stored)
and which of the record's fields others may not see. Every other form is
derived from those by one shared rule:

* the public form (spectators, and every seat not named below) is the
  record without its hidden fields: the very record dict when nothing is
  hidden;
* the event's own seat (the record's ``seat``) also sees its ``OWN`` fields;
* with ``PER_SEAT = (field, name)`` each seat sees its own item of the
  record's per-seat list under ``name``, and a seat outside the table sees
  nothing;
* an engine-only event (the deal) is seen by no seat and no spectator;
* the stored text is the record as the one record encoder writes it.

Each form is built once, whatever asks first, so the server encodes a
public payload once for every seat.
"""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.games.muushig import events as muushig_events
from arena.games.muushig.events import (AllFolded, Deal, Decision, Exchange, HandEnd, HandStart,
                                        MuushigEvent, RoundEnd, RoundStart, Take, Trick)
from arena.records import encode_record
from arena.server.session_output import ServerEvent, record_text

from .helpers import RULES, random_match_events

EVENT_CLASSES = {cls for cls in vars(muushig_events).values()
                 if isinstance(cls, type) and issubclass(cls, MuushigEvent) and cls is not MuushigEvent}
SEATS = range(-1, 7)  # every seat of the largest table, and seats outside it


def _derived_seat_view(event: MuushigEvent, seat: int) -> dict | None:
    """What the shared rule says ``seat`` sees of ``event``, from its record."""
    record = event.for_record()
    if event.ENGINE_ONLY:
        return None
    public = {k: v for k, v in record.items() if k not in event.HIDDEN}
    if event.OWN and seat == record["seat"]:
        return {**public, **{k: record[k] for k in event.OWN}}
    if event.PER_SEAT is not None:
        source, name = event.PER_SEAT
        return {**public, name: record[source][seat]} if 0 <= seat < len(record[source]) else None
    return public


def test_each_kind_of_event_is_defined_once_by_its_record_and_what_it_hides():
    # No kind writes a form of its own: seat views, the public form, the
    # record and its text all come from the kind's one ``record()``.
    derived = {"for_seat", "for_public", "for_record", "record_text", "_build"}
    for cls in EVENT_CLASSES:
        assert "record" in vars(cls), cls.__name__
        assert not derived & set(vars(cls)), (cls.__name__, derived & set(vars(cls)))
        hidden = set(cls.HIDDEN)
        assert set(cls.OWN) <= hidden, cls.__name__
        if cls.PER_SEAT is not None:
            assert cls.PER_SEAT[0] in hidden, cls.__name__


def test_random_matches_show_every_kind_of_event():
    # What the properties below cover: every event class of the game.
    seen = set()
    for seed in range(40):
        seen |= {type(e) for e in random_match_events({"players": 5}, seed)}
    assert seen == EVENT_CLASSES


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=RULES, seed=st.integers(0, 2**32 - 1))
def test_every_form_of_every_event_follows_from_its_record(rules, seed):
    for event in random_match_events(rules, seed):
        record = event.for_record()
        assert next(iter(record)) == "kind" and record["kind"] == event.kind
        for seat in SEATS:
            assert event.for_seat(seat) == _derived_seat_view(event, seat), (event, seat)
        if event.ENGINE_ONLY:
            assert event.for_public() is None
        else:
            assert event.for_public() == {k: v for k, v in record.items() if k not in event.HIDDEN}
        assert record_text(event) == encode_record(record)


def test_public_events_give_every_seat_spectators_and_the_record_one_dict():
    for event in random_match_events(None, 1):
        if event.HIDDEN or event.ENGINE_ONLY:
            continue
        first = event.for_seat(3)
        assert all(event.for_seat(s) is first for s in range(5))
        assert event.for_public() is first and event.for_record() is first
        assert first["kind"] == event.kind


def test_every_form_is_built_once_whatever_asks_first():
    # Deal is the exception: engine-only, kept for the reveal and asked once
    # for its record, so it builds its record on each ask instead of keeping it.
    for order in ("record", "public", "seat"):
        for event in random_match_events(None, 2):
            if isinstance(event, Deal):
                assert event.for_record() == event.for_record()
                assert event.for_public() is None and event.for_seat(0) is None
                continue
            asks = {"record": event.for_record, "public": event.for_public,
                    "seat": lambda: event.for_seat(0)}
            asks[order]()
            forms = [event.for_record(), event.for_public()] + [event.for_seat(s) for s in range(6)]
            again = [event.for_record(), event.for_public()] + [event.for_seat(s) for s in range(6)]
            assert all(a is b for a, b in zip(forms, again))


def test_a_hand_start_shows_each_seat_its_own_five_cards_and_stores_all():
    event = HandStart(0, 0, 4, 31, (0b11111, 0b11111 << 5, 0b11111 << 10))
    assert event.for_public() == {"kind": "hand_start", "round": 0, "hand": 0, "dealer": 4,
                                  "face_up": "AC", "trump": "C"}
    assert event.for_seat(1)["cards"] == ["QH", "KH", "AH", "7S", "8S"]
    assert event.for_seat(3) is None
    assert list(event.for_record()) == ["kind", "round", "hand", "dealer", "face_up", "trump", "hands"]


def test_an_exchange_shows_the_count_to_others_and_the_drawn_cards_to_its_seat():
    event = Exchange(2, 0b11, (31, 30))
    public = event.for_public()
    assert public == {"kind": "exchange", "seat": 2, "count": 2}
    assert all(event.for_seat(s) is public for s in (0, 1, 3, 4))
    assert event.for_seat(2) == {"kind": "exchange", "seat": 2, "count": 2, "drawn": ["AC", "KC"]}
    assert event.for_record() == {"kind": "exchange", "seat": 2, "count": 2,
                                  "discarded": ["7H", "8H"], "drawn": ["AC", "KC"]}


def test_a_take_tells_everyone_whether_never_which_card_went():
    taken, declined = Take(4, 7), Take(4, None)
    assert taken.for_seat(4) == taken.for_public() == {"kind": "take", "seat": 4, "taken": True}
    assert taken.for_record()["discarded"] == "AH"
    assert declined.for_public() == {"kind": "take", "seat": 4, "taken": False}
    assert declined.for_record()["discarded"] is None


def test_edge_values_are_stored_as_the_record_encoder_writes_them():
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
        text = record_text(event)
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
