"""Fuzzing the decoders: arbitrary bytes only ever give messages, "need more
bytes", or the documented frame errors -- never any other exception."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import MAX_BOT_FRAME, Decoder, Encoding, FrameError, MalformedFrameError, encode

FUZZ = settings(max_examples=120, deadline=None)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)
messages = st.dictionaries(st.text(max_size=8), json_values, max_size=5)


def drain(decoder: Decoder, chunks: list[bytes]) -> list[dict]:
    out: list[dict] = []
    try:
        for chunk in chunks:
            decoder.receive_data(chunk)
            out.extend(decoder)
    except FrameError as exc:
        assert exc.code in ("frame_too_large", "malformed")
        assert exc.message
    return out


@FUZZ
@given(st.lists(st.binary(max_size=64), max_size=8))
def test_random_bytes_never_crash_the_server_decoder(chunks):
    for message in drain(Decoder.for_server(), chunks):
        assert isinstance(message, dict)
        assert all(isinstance(key, str) for key in message)


@FUZZ
@given(st.binary(max_size=200))
def test_random_bytes_after_a_brace_never_crash_the_jsonl_decoder(data):
    drain(Decoder.for_server(), [b"{", data])


@FUZZ
@given(st.binary(max_size=200))
def test_random_msgpack_bodies_never_crash_the_decoder(body):
    if body:
        drain(Decoder.for_server(), [len(body).to_bytes(4, "big"), body])


@FUZZ
@given(st.lists(messages, min_size=1, max_size=4), st.sampled_from(list(Encoding)), st.data())
def test_truncated_streams_wait_for_more_and_valid_ones_round_trip(batch, encoding, data):
    stream = b"".join(encode(message, encoding) for message in batch)
    cut = data.draw(st.integers(0, len(stream)))
    decoder = Decoder(max_frame=MAX_BOT_FRAME, encoding=encoding)
    first = decoder.feed(stream[:cut])
    assert first == batch[: len(first)]  # a truncated stream yields a prefix, no error
    rest = decoder.feed(stream[cut:])
    assert first + rest == batch


@FUZZ
@given(st.lists(messages, min_size=1, max_size=3), st.integers(0, 255), st.data())
def test_a_flipped_byte_gives_messages_or_a_frame_error(batch, value, data):
    stream = bytearray(b"".join(encode(message, Encoding.MSGPACK) for message in batch))
    stream[data.draw(st.integers(0, len(stream) - 1))] = value
    drain(Decoder.for_server(), [bytes(stream)])


def test_deep_nesting_is_malformed_not_a_crash():
    body = b"\x81\xa1a" + b"\x91" * 60_000 + b"\xc0"  # {"a": [[[...]]]} nested 60k deep
    decoder = Decoder.for_server()
    with pytest.raises(MalformedFrameError):
        decoder.feed(len(body).to_bytes(4, "big") + body)
    line = b'{"a":' + b"[" * 30_000 + b"]" * 30_000 + b"}\n"  # within the line limit
    with pytest.raises(MalformedFrameError):
        Decoder.for_server().feed(line)
