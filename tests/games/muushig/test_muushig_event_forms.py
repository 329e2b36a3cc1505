"""Each event builds each of its wire forms once: every seat allowed the
public form, spectators and (where nothing is hidden) the record get the
same dict object, however often and in whatever order they are asked."""

from __future__ import annotations

from arena.games.muushig.events import Deal, Exchange, HandStart, Take

from .helpers import random_match_events


def test_public_events_give_every_seat_spectators_and_the_record_one_dict():
    for event in random_match_events(None, 1):
        if isinstance(event, (Deal, HandStart, Exchange, Take)):
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


def test_an_exchange_shows_the_count_to_others_and_the_drawn_cards_to_its_seat():
    exchanges = [e for e in random_match_events(None, 3) if isinstance(e, Exchange)]
    assert exchanges
    for event in exchanges:
        public = event.for_public()
        assert public == {"kind": "exchange", "seat": event.seat, "count": event.count}
        others = [event.for_seat(s) for s in range(5) if s != event.seat]
        assert all(o is public for o in others)
        own = event.for_seat(event.seat)
        assert own["drawn"] == event.for_record()["drawn"] and own["count"] == event.count
