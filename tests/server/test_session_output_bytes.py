"""The session's output, byte for byte, as the plain per-event loop makes it.

``SessionOutput.emit`` takes shortcuts on the hot path (seats to write to
kept between calls, one encoding per distinct payload); here a whole match
is played twice from the same deals -- once with it, once with the plain
loop below (every event: its record as JSON, each seat that may see it its
frame) -- and the bytes to each seat, the records and the public events
must be the same.
"""

from __future__ import annotations

import pytest

import itertools
import random
from typing import Any, Iterable

from arena.games import get_game
from arena.records import encode_record
from arena.server import session_output
from arena.server.seats import Seat, SeatKind
from arena.server.session import MatchSession, TimeLimits
from arena.server.session_output import FLUSH_AT_EVENTS, FLUSH_KINDS, SessionOutput
from protocol.codec import Encoding, encode

MUUSHIG = get_game("muushig")
ENCODINGS = [Encoding.MSGPACK, Encoding.JSONL, Encoding.MSGPACK, None, Encoding.JSONL]


class PlainOutput(SessionOutput):
    def emit(self, events: Iterable[Any]) -> None:
        flush = False
        for event in events:
            if event.kind == "deal":
                self._out.records.append(encode_record(event.for_record()))
                event = self._commit(event)
            record = event.for_record()
            text = encode_record(record)
            self._out.records.append(text)
            public = event.for_public()
            if public is not None:
                self._out.public.append((public, text if public is record else None))
            for index, encoding in enumerate(self.encodings):
                payload = event.for_seat(index)
                if encoding is None or payload is None:
                    continue
                whole = {"type": "event", "match": self.match_id, "event": payload}
                self._buffers[index].append(encode(whole, encoding))
                if len(self._buffers[index]) >= FLUSH_AT_EVENTS:
                    flush = True
            if event.kind in FLUSH_KINDS:
                flush = True
        if flush:
            self.flush_all()


def first_option(phase, options, state):
    return options[0] if isinstance(options, list) else 0


def _play(output: type[SessionOutput], monkeypatch, seed: int) -> tuple[list, list, list]:
    salts = (f"{n:032x}" for n in itertools.count())
    monkeypatch.setattr(session_output, "_new_salt", lambda: next(salts))
    engine = MUUSHIG.new_match({"max_hands": 3}, random.Random(seed), None)
    seats = [Seat(index=i, name=f"s{i}",
                  kind=SeatKind.REMOTE if ENCODINGS[i] else SeatKind.HOUSE,
                  house=first_option, token_hash=f"h{i}") for i in range(engine.n_seats)]
    session = MatchSession(match_id="m-7", game="muushig", engine=engine, seats=seats,
                           limits=TimeLimits(1000, 0), encodings=list(ENCODINGS))
    session.output = output("m-7", "muushig", list(ENCODINGS))
    sends: list = []
    records: list = []
    public: list = []

    def drain() -> None:
        step = session.step()
        sends.extend((w.seat, w.data, w.holds_request) for w in step.writes)
        records.extend(step.records)
        public.extend(step.public)

    now = 0.0
    session.start(now)
    drain()
    steps = 0
    while not session.over:
        now += 0.001
        steps += 1
        if session.house_due:
            session.play_house(now)
        else:
            pending = next(iter(session._pending.values()))
            session.answer(pending.seat, pending.id, pending.legal[-1], now)
        if steps == 30:
            session.disconnect(1, now)  # a seat leaving changes who is written to
        drain()
    assert steps > 30
    return sends, records, public


@pytest.mark.source_only  # subclasses or patches a compiled class
def test_a_match_sends_stores_and_shows_what_the_plain_loop_does(monkeypatch):
    for seed in range(3):
        assert _play(SessionOutput, monkeypatch, seed) == _play(PlainOutput, monkeypatch, seed)
