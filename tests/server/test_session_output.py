"""The session's output is an object of its own: built by the session,
drained as one step, usable (and testable) without a match around it.

The session decides what is sent; its ``SessionOutput`` encodes, buffers
events until they are due and gathers one input's sends into one
``SessionStep`` with at most one write per seat.
"""

from __future__ import annotations

import random
import sys

from arena.games import get_game
from arena.server.seats import AutopilotReason, Seat, SeatKind
from arena.server.session import MatchSession, TimeLimits
from arena.server.session_output import ServerEvent, SessionOutput
from protocol.codec import Decoder, Encoding
from protocol.errors import ErrorCode
from protocol.messages import Limits

MUUSHIG = get_game("muushig")


def _messages(encoding: Encoding, data: bytes) -> list[dict]:
    decoder = Decoder.for_client(encoding)
    decoder.receive_data(data)
    return list(decoder)


def _request(request_id: int) -> dict:
    return {"type": "request", "match": "m1", "request_id": request_id, "phase": "play",
            "deadline_ms": 1000, "legal": [0], "state": {}}


def test_an_event_waits_for_the_seats_next_request_and_leaves_with_it_in_one_write():
    output = SessionOutput("m1", "muushig", [Encoding.MSGPACK, None, Encoding.JSONL])
    output.emit([ServerEvent("note", text="not urgent")])  # not a flushing kind: buffered
    assert output.take(None, False, False).writes == []
    output.send_request(0, _request(7))
    step = output.take(12.5, True, False)
    assert [(w.seat, w.holds_request) for w in step.writes] == [(0, True)]
    assert [m["type"] for m in _messages(Encoding.MSGPACK, step.writes[0].data)] == [
        "event", "request"]
    assert (step.next_deadline, step.house_due, step.over) == (12.5, True, False)


def test_a_flushing_event_goes_to_every_reading_seat_once_and_to_storage_and_spectators():
    output = SessionOutput("m1", "muushig", [Encoding.MSGPACK, None, Encoding.JSONL])
    output.emit([ServerEvent("timeout", seat=1, phase="play")])
    output.send_request(2, _request(8))  # joins the flushed event: still one write
    step = output.take(None, False, False)
    assert [(w.seat, w.holds_request) for w in step.writes] == [(0, False), (2, True)]
    assert [m["type"] for m in _messages(Encoding.JSONL, step.writes[1].data)] == [
        "event", "request"]
    assert len(step.records) == 1 and '"timeout"' in step.records[0]
    assert [public["kind"] for public, _ in step.public] == ["timeout"]
    assert output.take(None, False, False).writes == []  # handed over: the next starts empty


def test_a_seat_that_left_is_sent_nothing_until_it_is_back():
    output = SessionOutput("m1", "muushig", [Encoding.MSGPACK, Encoding.MSGPACK])
    output.emit([ServerEvent("note", text="buffered for seat 1")])
    output.seat_left(1)
    output.emit([ServerEvent("timeout", seat=1, phase="play")])
    assert [w.seat for w in output.take(None, False, False).writes] == [0]
    output.seat_back(1, Encoding.JSONL)  # starts afresh: the old buffer is gone
    output.send_request(1, _request(9))
    (write,) = output.take(None, False, False).writes
    assert write.seat == 1 and [m["type"] for m in _messages(Encoding.JSONL, write.data)] == [
        "request"]


def test_after_match_end_nothing_more_of_the_match_is_sent():
    output = SessionOutput("m1", "muushig", [Encoding.MSGPACK])
    output.send_match_end({"ranks": [1]}, [])
    output.send_error(0, ErrorCode.LATE, "late", 3)
    (write,) = output.take(None, False, True).writes
    assert [m["type"] for m in _messages(Encoding.MSGPACK, write.data)] == ["match_end"]


def test_match_start_and_the_drivers_notes_are_part_of_the_step():
    output = SessionOutput("m1", "muushig", [Encoding.MSGPACK])
    output.send_match_start(0, ("a",), {"max_hands": 1}, Limits(1000, 500))
    output.autopilot_changed(0, AutopilotReason.TIMEOUTS)
    output.record('{"kind":"action"}')
    step = output.take(None, False, False)
    (start,) = _messages(Encoding.MSGPACK, step.writes[0].data)
    assert start["type"] == "match_start" and start["players"] == ["a"]
    assert step.autopilot == [(0, AutopilotReason.TIMEOUTS)]
    assert step.records == ['{"kind":"action"}']


def test_the_session_owns_its_output_and_hands_over_what_it_built():
    engine = MUUSHIG.new_match({"max_hands": 1}, random.Random(1), None)
    seats = [Seat(index=i, name=f"s{i}", kind=SeatKind.REMOTE,
                  house=lambda phase, options, state: options[0], token_hash=f"h{i}")
             for i in range(engine.n_seats)]
    session = MatchSession(match_id="m1", game="muushig", engine=engine, seats=seats,
                           limits=TimeLimits(1000, 0),
                           encodings=[Encoding.MSGPACK] * engine.n_seats, sealed=True)
    assert not isinstance(session, SessionOutput)  # composed, not mixed in
    assert isinstance(session.output, SessionOutput) and session.output.sealed
    session.sealed = False  # the server sets it after building the table
    assert not session.output.sealed
    session.start(0.0)
    step = session.step()
    assert sorted(w.seat for w in step.writes) == list(range(engine.n_seats))
    assert step.next_deadline == 1.0 and not step.over
    assert session.step().writes == []


def test_a_decision_builds_no_dataclass_through_generated_code():
    """A step and its writes are made for every input: plain classes, not
    dataclasses, whose ``__init__`` the dataclass machinery writes as
    interpreted code (file ``<string>``) that a compiled build still runs
    through the interpreter. Counted over a match with every seat's answer
    by a bot; the few left are per deal (its ``DealInfo``), not per decision."""
    engine = MUUSHIG.new_match({"max_hands": 2}, random.Random(3), None)
    seats = [Seat(index=i, name=f"s{i}", kind=SeatKind.REMOTE,
                  house=lambda phase, options, state: options[0], token_hash=f"h{i}")
             for i in range(engine.n_seats)]
    session = MatchSession(match_id="m1", game="muushig", engine=engine, seats=seats,
                           limits=TimeLimits(1000, 0),
                           encodings=[Encoding.MSGPACK] * engine.n_seats)
    generated: list[str] = []

    def profile(frame, event, arg):
        if event == "call" and frame.f_code.co_filename == "<string>":
            generated.append(frame.f_code.co_name)

    session.start(0.0)
    steps = [session.step()]
    decisions = 0
    while not session.over:
        (request,) = [m for w in steps[-1].writes if w.holds_request
                      for m in _messages(Encoding.MSGPACK, w.data) if m["type"] == "request"]
        seat = next(w.seat for w in steps[-1].writes if w.holds_request)
        sys.setprofile(profile)
        try:
            session.answer(seat, request["id"], request["legal"][0], 0.0)
            steps.append(session.step())
        finally:
            sys.setprofile(None)
        decisions += 1
    assert decisions > 40
    assert len(generated) * 5 < decisions, generated
