"""Messages: every type round-trips through both encodings; bad fields are named."""

from __future__ import annotations

import pytest

from protocol import (
    Action,
    Bye,
    Encoding,
    Error,
    ErrorCode,
    Event,
    Hello,
    Limits,
    MatchEnd,
    MatchStart,
    Request,
    UnknownTypeError,
    ValidationError,
    Welcome,
    decode_one,
    encode,
    parse_bot_message,
    parse_server_message,
)
from protocol.errors import ERROR_EXPLANATIONS

BOT_MESSAGES = [
    Hello(protocol=1, token="tok-123", name="Тэмүүлэн"),
    Hello(protocol=1, token="tok-123"),
    Action(match="m1", id=7, action="enter"),
    Action(match="m1", id=8, action=["7H", "9S"]),
    Action(match="m1", id=9, action=None),
    Bye(),
]

SERVER_MESSAGES = [
    Welcome(protocol=1, bot="alice", server="muushig-arena/0.1"),
    Error(code=ErrorCode.ILLEGAL_ACTION, message="must follow suit: you hold a heart (8H)", id=4),
    Error(code=ErrorCode.AUTH_FAILED, message="unknown token"),
    MatchStart(
        match="m1",
        game="muushig",
        seat=2,
        players=("a", "b", "c", "d", "e"),
        rules={"max_hands": 200, "last_two_forced": False},
        limits=Limits(decision_ms=2000, bank_ms=10000),
    ),
    Event(match="m1", event={"kind": "play", "seat": 3, "card": "AS"}),
    Request(
        match="m1",
        id=12,
        phase="take",
        deadline_ms=1500,
        legal=[None, "7H", "KS"],
        state={"round": 0, "hand": 1, "cards": ["7H", "KS"], "leader": None},
    ),
    MatchEnd(
        match="m1",
        result={"stars": [1, 0, 2, 1, 1], "sums": [1, 2, 3, 4, 5], "ranks": [3, 5, 1, 3, 3]},
        reveal=[{"round": 0, "hand": 0, "salt": "s", "deck": ["AS"] * 32}],
    ),
    Bye(),
]


@pytest.mark.parametrize("encoding", list(Encoding))
@pytest.mark.parametrize("message", BOT_MESSAGES, ids=repr)
def test_bot_messages_round_trip(message, encoding):
    wire = decode_one(encode(message.to_wire(), encoding), encoding)
    assert wire["type"] == message.type
    assert parse_bot_message(wire) == message


@pytest.mark.parametrize("encoding", list(Encoding))
@pytest.mark.parametrize("message", SERVER_MESSAGES, ids=repr)
def test_server_messages_round_trip(message, encoding):
    wire = decode_one(encode(message.to_wire(), encoding), encoding)
    assert wire["type"] == message.type
    assert parse_server_message(wire) == message


def test_error_without_id_leaves_the_field_out():
    assert Error(ErrorCode.LATE, "too late").to_wire() == {"type": "error", "code": "late", "message": "too late"}


def test_unknown_fields_are_ignored():
    hello = parse_bot_message({"type": "hello", "protocol": 1, "token": "t", "colour": "blue"})
    assert hello == Hello(1, "t")


def test_unknown_type_is_its_own_error_and_does_not_close():
    with pytest.raises(UnknownTypeError) as caught:
        parse_bot_message({"type": "dance", "steps": 3})
    assert caught.value.code == ErrorCode.UNKNOWN_TYPE
    assert caught.value.type_name == "dance"
    assert not caught.value.closes_connection
    assert "dance" in str(caught.value)


def test_a_server_only_type_from_a_bot_is_unknown():
    with pytest.raises(UnknownTypeError):
        parse_bot_message(Welcome(1, "x", "y").to_wire())


@pytest.mark.parametrize(
    ("wire", "text"),
    [
        ({"type": "hello", "protocol": "one", "token": "t"}, "hello.protocol: expected an integer, got 'one'"),
        ({"type": "hello", "protocol": True, "token": "t"}, "hello.protocol: expected an integer, got True"),
        ({"type": "hello", "protocol": 1}, "hello.token: expected a string, got nothing (the field is missing)"),
        ({"type": "hello", "protocol": 1, "token": "t", "name": 5}, "hello.name: expected a string, got 5"),
        ({"type": "action", "match": "m", "id": "3", "action": "x"}, "action.id: expected an integer, got '3'"),
        ({"type": "action", "match": 1, "id": 3, "action": "x"}, "action.match: expected a string, got 1"),
        ({"type": "action", "match": "m", "id": 3}, "action.action: expected a value (null is allowed)"),
        ({"protocol": 1}, "message.type: expected a string, got nothing"),
        ({"type": 5}, "message.type: expected a string, got 5"),
    ],
)
def test_validation_errors_name_the_field(wire, text):
    with pytest.raises(ValidationError) as caught:
        parse_bot_message(wire)
    assert text in str(caught.value)
    assert caught.value.code == ErrorCode.MALFORMED


@pytest.mark.parametrize(
    ("wire", "text"),
    [
        ({"type": "request", "match": "m", "id": 1, "phase": "play", "deadline_ms": 5, "legal": "AS", "state": {}},
         "request.legal: expected an array, got 'AS'"),
        ({"type": "match_start", "match": "m", "game": "g", "seat": 0, "players": ["a", 2], "rules": {},
          "limits": {"decision_ms": 1}}, "match_start.players[1]: expected a string, got 2"),
        ({"type": "match_start", "match": "m", "game": "g", "seat": 0, "players": [], "rules": {},
          "limits": {"decision_ms": -1}}, "match_start.limits.decision_ms: expected an integer >= 0, got -1"),
        ({"type": "event", "match": "m", "event": {"seat": 1}}, "event.event.kind: expected a string"),
    ],
)
def test_server_validation_errors_name_the_field(wire, text):
    with pytest.raises(ValidationError) as caught:
        parse_server_message(wire)
    assert text in str(caught.value)


def test_an_unknown_error_code_from_a_newer_server_stays_a_string():
    error = parse_server_message({"type": "error", "code": "solar_flare", "message": "?"})
    assert error.code == "solar_flare"


def test_every_error_code_of_the_protocol_is_listed_and_explained():
    expected = {
        "hello_timeout", "expected_hello", "auth_failed", "unsupported_protocol", "frame_too_large",
        "malformed", "unknown_type", "illegal_action", "unknown_request", "late", "rate_limited",
    }
    assert {code.value for code in ErrorCode} == expected
    assert set(ERROR_EXPLANATIONS) == set(ErrorCode)
    closing = {code.value for code in ErrorCode if code.closes_connection}
    assert closing == {"hello_timeout", "expected_hello", "auth_failed", "unsupported_protocol",
                       "frame_too_large", "malformed"}
