"""JSON Lines bytes do not depend on how the encoder is cached."""

import json

import pytest

from arena.server.envelope import Envelope
from protocol.codec import Encoding, encode

MESSAGES = [
    {"type": "event", "match": "m", "event": {"kind": "trick", "cards": [[0, "AS"], [1, "7H"]]}},
    {"type": "request", "state": {"name": "Мөнх\u2028\"quoted\"", "none": None, "ok": True}},
    {"type": "x", "nested": [[], {}, [1, -2, 2**63]]},
]


def _standard(message):
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode("utf-8") + b"\n"


@pytest.mark.parametrize("message", MESSAGES)
def test_a_jsonl_line_is_the_standard_compact_encoding(message):
    assert encode(message, Encoding.JSONL) == _standard(message)


@pytest.mark.parametrize("message", MESSAGES)
def test_an_enveloped_jsonl_event_is_the_whole_message_encoded(message):
    envelope = Envelope({"type": "event", "match": "m"}, "event")
    assert envelope.frame(message, Encoding.JSONL) == _standard(
        {"type": "event", "match": "m", "event": message})


def test_a_float_that_is_not_finite_is_refused():
    with pytest.raises(ValueError):
        encode({"x": float("nan")}, Encoding.JSONL)
