"""Whatever bytes a bot sends, the server's decoder only ever raises
``FrameError`` (answered as ``malformed`` / ``frame_too_large``), and
whatever it returns can be sent back: every string is valid Unicode."""

from __future__ import annotations

import struct

import msgpack
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.codec import Decoder, Encoding, encode
from protocol.errors import FrameError

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=30)


def decode_all(data: bytes) -> list[dict]:
    decoder = Decoder.for_server()
    out = []
    try:
        out = decoder.feed(data)
        while (message := decoder.next_message()) is not None:
            out.append(message)
    except FrameError:
        pass
    return out


def sendable(message: dict) -> None:
    encode(message, Encoding.MSGPACK)
    encode(message, Encoding.JSONL)


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=300))
def test_random_bytes_raise_only_frame_errors(data):
    for message in decode_all(data):
        sendable(message)


@settings(max_examples=300, deadline=None)
@given(st.binary(min_size=1, max_size=200))
def test_random_msgpack_bodies_raise_only_frame_errors(body):
    for message in decode_all(struct.pack(">I", len(body)) + body):
        sendable(message)


@settings(max_examples=300, deadline=None)
@given(json_values, st.booleans())
def test_random_json_lines_raise_only_frame_errors(value, ascii_only):
    import json

    line = json.dumps({"type": "x", "v": value}, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")
    for message in decode_all(line + b"\n"):
        sendable(message)


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=0, max_value=3000), st.sampled_from(["[", "{\"a\":"]))
def test_any_nesting_depth_is_decoded_or_refused_cleanly(depth, opener):
    closer = "]" if opener == "[" else "}"
    line = ('{"type":"x","v":' + opener * depth + "1" * (opener != "[") + closer * depth + "}")
    decode_all(line.encode() + b"\n")
    body = b"\x82\xa4type\xa1x\xa1v" + b"\x91" * depth + b"\xc0"
    decode_all(struct.pack(">I", len(body)) + body)


def test_surrogates_never_come_out_of_the_decoder():
    assert decode_all(b'{"type":"\\udc80"}\n') == []
    assert decode_all(b'{"type":"\\ud83d\\ude00"}\n') == [{"type": "\U0001F600"}]
    assert msgpack  # msgpack strings are strict UTF-8 already
