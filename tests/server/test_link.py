"""The bot link's rules (protocol page §2, §5 and Limits), on a fake clock.

Each test feeds :class:`BotLink` bytes and times by hand and reads what it
decides; no socket, no loop, no wall clock. (The server tests check the
same rules end to end; when they happen is settled here.)
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from arena.server.action_frame import PlainAction
from arena.server.admission import Refusal
from arena.server.link import (BotLink, CameAlive, Close, HelloReceived, LinkLimits, LinkState,
                               Send)
from protocol.codec import Decoder, Encoding, encode
from protocol.errors import ErrorCode

HELLO = {"type": "hello", "protocol": 1, "token": "t", "name": "bot"}
LIMITS = LinkLimits(hello_timeout_s=5.0, rate_per_s=10.0, rate_burst=4, rate_strikes=3,
                    idle_timeout_s=60.0, server_name="test")


class Counters:
    def __init__(self) -> None:
        self.messages_total = 0
        self.frames_refused_total = 0
        self.errors: list[str] = []

    def error(self, code: str) -> None:
        self.errors.append(code)


def sent(events: list[Any], encoding: Encoding = Encoding.MSGPACK) -> list[dict]:
    """The messages the link's ``Send`` events carry."""
    decoder = Decoder.for_client(encoding)
    for event in events:
        if isinstance(event, Send):
            decoder.receive_data(event.data)
    out = []
    while (message := decoder.next_message()) is not None:
        out.append(message)
    return out


def codes(events: list[Any], encoding: Encoding = Encoding.MSGPACK) -> list[str]:
    return [m["code"] for m in sent(events, encoding)]


def closes(events: list[Any]) -> list[Close]:
    return [e for e in events if isinstance(e, Close)]


def action(n: int, answer: Any = "enter") -> dict:
    return {"type": "action", "match": "m", "id": n, "action": answer}


def frames(*messages: dict, encoding: Encoding = Encoding.MSGPACK) -> bytes:
    return b"".join(encode(m, encoding) for m in messages)


def opened(limits: LinkLimits = LIMITS, now: float = 0.0,
           encoding: Encoding = Encoding.MSGPACK) -> BotLink:
    """A link whose hello was accepted at ``now``."""
    link = BotLink(limits, now, Counters())
    (event,) = link.feed(frames(HELLO, encoding=encoding), now)
    assert isinstance(event, HelloReceived)
    welcome = link.accept("bot")
    assert Decoder.for_client(encoding).receive_data(welcome) is None
    assert link.state is LinkState.OPEN
    return link


# -- the handshake --------------------------------------------------------------------
def test_no_hello_timeout_before_the_deadline():
    link = BotLink(LIMITS, 100.0)
    assert link.next_deadline() == 105.0
    assert link.tick(104.999) == []
    assert link.state is LinkState.AWAITING_HELLO


def test_a_hello_not_complete_at_the_deadline_gets_hello_timeout_and_a_close():
    link = BotLink(LIMITS, 100.0)
    assert link.feed(frames(HELLO)[:10], 101.0) == []  # half a hello
    events = link.tick(105.0)
    assert codes(events) == ["hello_timeout"]
    assert "within 5 s" in sent(events)[0]["message"]
    assert closes(events) == [Close("hello_timeout")]
    assert link.feed(frames(HELLO)[10:], 105.1) == []  # the rest is not read


def test_a_hello_trickled_in_time_is_read_and_the_deadline_goes():
    link = BotLink(LIMITS, 0.0)
    data = frames(HELLO, encoding=Encoding.JSONL)
    events: list[Any] = []
    for i, byte in enumerate(data):
        events += link.feed(bytes([byte]), i * 0.01)
    assert [type(e) for e in events] == [HelloReceived]
    link.accept("bot")
    assert link.next_deadline() is None
    assert link.tick(10.0) == []
    assert link.encoding is Encoding.JSONL


def test_the_first_message_must_be_a_hello():
    link = BotLink(LIMITS, 0.0)
    events = link.feed(frames(action(1), HELLO), 0.1)
    assert codes(events) == ["expected_hello"] and closes(events)
    assert link.state is LinkState.CLOSED  # the hello after it is not read


def test_an_unsupported_protocol_is_refused_and_closed():
    events = BotLink(LIMITS, 0.0).feed(frames({**HELLO, "protocol": 2}), 0.0)
    assert codes(events) == ["unsupported_protocol"] and closes(events)


def test_a_hello_with_a_wrongly_typed_field_is_malformed_and_closed():
    events = BotLink(LIMITS, 0.0).feed(frames({**HELLO, "max_matches": 0}), 0.0)
    assert codes(events) == ["malformed"] and closes(events)


def test_nothing_after_a_hello_is_read_until_the_host_answers_it():
    link = BotLink(LIMITS, 0.0)
    events = link.feed(frames(HELLO, action(1)), 0.0)
    assert [type(e) for e in events] == [HelloReceived]
    assert link.state is LinkState.HELLO_PENDING
    assert link.tick(5.0) == []  # the host is deciding: no timeout meanwhile
    link.accept("bot")
    assert link.feed(b"", 0.0) == [PlainAction("action", "m", 1, "enter")]


def test_a_refused_hello_gets_its_error_with_retry_after_and_nothing_more_is_read():
    link = BotLink(LIMITS, 0.0)
    link.feed(frames(HELLO, action(1)), 0.0)
    events = link.refuse(Refusal(ErrorCode.RATE_LIMITED, "too many; connection closed",
                                 retry_after_s=5))
    (error,) = sent(events)
    assert (error["code"], error["retry_after_s"]) == ("rate_limited", 5)
    assert closes(events) and link.feed(b"", 0.1) == []


def test_a_second_hello_is_an_unknown_type_and_the_connection_stays_open():
    link = opened()
    events = link.feed(frames(HELLO), 1.0)
    assert codes(events) == ["unknown_type"] and not closes(events)
    assert link.state is LinkState.OPEN


# -- bad input --------------------------------------------------------------------------
def test_an_unknown_type_is_answered_and_ignored():
    link = opened()
    events = link.feed(frames({"type": "dance"}, action(1)), 1.0)
    assert codes(events) == ["unknown_type"]
    assert events[-1] == PlainAction("action", "m", 1, "enter")


def test_a_message_without_a_type_after_the_hello_is_malformed_and_closes():
    link = opened()
    events = link.feed(frames({"kind": "action"}, action(1)), 1.0)
    assert codes(events) == ["malformed"] and closes(events)
    assert not any(isinstance(e, PlainAction) for e in events)


def test_an_action_with_a_wrongly_typed_field_is_malformed_and_closes():
    events = opened().feed(frames({**action(1), "id": "seven"}), 1.0)
    assert codes(events) == ["malformed"] and closes(events)


def test_a_frame_over_the_limit_is_refused_on_its_length_and_counted():
    link = opened()
    events = link.feed(b"\x00\x01\x00\x01", 1.0)
    assert codes(events) == ["frame_too_large"] and closes(events)
    assert link.metrics.frames_refused_total == 1


def test_text_on_the_port_is_answered_with_a_json_line():
    events = BotLink(LIMITS, 0.0).feed(b"GET / HTTP/1.1\r\n", 0.0)
    assert codes(events, Encoding.JSONL) == ["malformed"] and closes(events)


def test_bye_closes_at_once():
    events = opened().feed(frames({"type": "bye"}, action(1)), 1.0)
    assert events == [Close("bye", bye=True)]


# -- the rate limit ---------------------------------------------------------------------
def test_a_burst_passes_and_the_message_after_it_is_refused_but_the_connection_stays():
    link = opened(now=10.0)
    events = link.feed(frames(*[action(i) for i in range(5)]), 10.0)
    assert [e.id for e in events if isinstance(e, PlainAction)] == [0, 1, 2]  # burst 4, hello 1
    assert codes(events) == ["rate_limited", "rate_limited"] and not closes(events)
    assert "message ignored" in sent(events)[0]["message"]


def test_the_bucket_refills_with_time_at_the_rate():
    link = opened(now=10.0)
    link.feed(frames(*[action(i) for i in range(3)]), 10.0)  # the bucket is empty
    assert codes(link.feed(frames(action(3)), 10.05)) == ["rate_limited"]  # half a token
    assert link.feed(frames(action(4)), 10.15) == [PlainAction("action", "m", 4, "enter")]


def test_after_the_strikes_a_flood_is_closed():
    link = opened(now=10.0)
    events = link.feed(frames(*[action(i) for i in range(10)]), 10.0)
    assert codes(events) == ["rate_limited"] * 3
    assert closes(events) == [Close("flood_closed")]
    assert "connection closed" in sent(events)[-1]["message"]
    assert link.metrics.errors == ["rate_limited"] * 3


def test_answers_to_the_servers_requests_never_count_against_the_bot():
    link = opened(now=10.0)
    answered = []
    for i in range(100):  # one request and its answer every millisecond
        link.request_sent()
        answered += link.feed(frames(action(i)), 10.0 + i / 1000)
    assert [e.id for e in answered] == list(range(100))


# -- idle -----------------------------------------------------------------------------
def test_an_idle_connection_is_closed_after_the_idle_time_not_before():
    link = opened()
    assert link.idle(100.0, busy=False) == []  # idle from now
    assert link.idle(159.9, busy=False) == []
    events = link.idle(160.0, busy=False)
    assert codes(events) == ["rate_limited"] and closes(events) == [Close("idle_closed")]
    assert "idle for 60 s" in sent(events)[0]["message"]


def test_being_seated_or_waiting_for_a_seat_restarts_the_idle_time():
    link = opened()
    link.idle(100.0, busy=False)
    assert link.idle(150.0, busy=True) == []
    assert link.idle(170.0, busy=False) == []
    assert link.idle(229.9, busy=False) == []
    assert closes(link.idle(230.0, busy=False))


def test_before_its_hello_a_connection_is_never_idle_only_late():
    link = BotLink(LIMITS, 0.0)
    assert link.idle(0.0, busy=False) == [] and link.idle(100.0, busy=False) == []


# -- autopilot ------------------------------------------------------------------------
def test_a_valid_message_brings_an_autopiloted_bot_back_before_the_message():
    link = opened()
    link.awaiting_life = True
    events = link.feed(frames(action(1)), 1.0)
    assert events == [CameAlive(), PlainAction("action", "m", 1, "enter")]
    assert link.awaiting_life is False
    assert link.feed(frames(action(2)), 2.0) == [PlainAction("action", "m", 2, "enter")]


def test_an_unknown_type_is_not_a_sign_of_life():
    link = opened()
    link.awaiting_life = True
    events = link.feed(frames({"type": "dance"}), 1.0)
    assert not any(isinstance(e, CameAlive) for e in events) and link.awaiting_life


# -- one reader, two decoders ---------------------------------------------------------------
answers = st.one_of(st.none(), st.sampled_from(["enter", "fold", "7H"]),
                    st.lists(st.sampled_from(["7H", "9S", "AS"]), max_size=3))


@settings(max_examples=60, deadline=None)
@given(st.lists(answers, min_size=1, max_size=6), st.integers(1, 40),
       st.sampled_from([Encoding.MSGPACK, Encoding.JSONL]))
def test_actions_read_whole_or_in_pieces_come_out_the_same(answers_, piece, encoding):
    """The C reader takes whole msgpack reads; the SDK decoder the rest."""
    data = frames(*[action(i, a) for i, a in enumerate(answers_)], encoding=encoding)
    roomy = LinkLimits(server_name="test")  # the bucket is not this test's subject
    whole = opened(roomy, encoding=encoding).feed(data, 1.0)
    link = opened(roomy, encoding=encoding)
    pieces: list[Any] = []
    for start in range(0, len(data), piece):
        pieces += link.feed(data[start:start + piece], 1.0)
    expected = [PlainAction("action", "m", i, a) for i, a in enumerate(answers_)]
    assert whole == expected and pieces == expected
