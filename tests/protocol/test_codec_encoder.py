"""Frames are encoded by msgspec and decoded by msgpack: for every value the
protocol carries, msgspec must write exactly the bytes ``msgpack.packb(value,
use_bin_type=True)`` writes (each int, string, array and map in its smallest
format, floats as float64), or a bot that re-encodes, or a stored comparison
of frames, would see the change."""

from __future__ import annotations

import enum

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.server.envelope import Envelope
from protocol.codec import Decoder, Encoding, encode

SCALARS = (st.none() | st.booleans() | st.integers(-2**63, 2**64 - 1)
           | st.floats(allow_nan=False) | st.text(max_size=300))
VALUES = st.recursive(
    SCALARS,
    lambda inner: (st.lists(inner, max_size=20) | st.tuples(inner, inner)
                   | st.dictionaries(st.text(max_size=40), inner, max_size=20)),
    max_leaves=60)


def msgpack_frame(message: dict) -> bytes:
    body = msgpack.packb(message, use_bin_type=True)
    return len(body).to_bytes(4, "big") + body


@settings(max_examples=400)
@given(value=VALUES)
def test_every_protocol_value_is_encoded_as_msgpack_encodes_it(value):
    message = {"type": "event", "value": value}
    assert encode(message, Encoding.MSGPACK) == msgpack_frame(message)


# Where msgpack changes format: the last size of one format, the first of the next.
@pytest.mark.parametrize("size", [0, 15, 16, 31, 32, 255, 256, 65535, 65536])
def test_strings_arrays_and_maps_change_format_at_the_same_sizes(size):
    message = {"type": "x", "text": "a" * size, "array": [0] * size,
               "map": {str(i): i for i in range(size)}, "wide": "é" * (size // 2)}
    assert encode(message, Encoding.MSGPACK) == msgpack_frame(message)


@pytest.mark.parametrize("number", [
    0, 127, 128, 255, 256, 65535, 65536, 2**32 - 1, 2**32, 2**64 - 1,
    -1, -32, -33, -128, -129, -32768, -32769, -2**31, -2**31 - 1, -2**63,
    0.0, -0.0, 1.5, 1e300, float("inf"), float("-inf")])
def test_numbers_take_the_same_format(number):
    message = {"type": "x", "n": number}
    assert encode(message, Encoding.MSGPACK) == msgpack_frame(message)


class Phase(enum.StrEnum):
    PLAY = "play"


def test_a_string_enum_is_sent_as_its_string():
    message = {"type": "x", "phase": Phase.PLAY}
    assert encode(message, Encoding.MSGPACK) == msgpack_frame({"type": "x", "phase": "play"})


def test_what_msgpack_cannot_carry_is_refused_with_a_type_error():
    with pytest.raises(TypeError):
        encode({"type": "x", "value": object()}, Encoding.MSGPACK)
    with pytest.raises((OverflowError, TypeError, ValueError)):
        encode({"type": "x", "value": 2**64}, Encoding.MSGPACK)


@given(value=VALUES)
def test_an_envelope_frames_what_msgpack_would(value):
    envelope = Envelope({"type": "event", "match": "m-1"}, "event")
    whole = {"type": "event", "match": "m-1", "event": value}
    framed = envelope.frame(value, Encoding.MSGPACK)
    assert framed == msgpack_frame(whole)
    decoder = Decoder.for_client(Encoding.MSGPACK)
    decoder.receive_data(framed)
    assert decoder.next_message() == msgpack.unpackb(msgpack.packb(whole), raw=False)
