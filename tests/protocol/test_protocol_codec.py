"""Framing: both encodings, detection by first byte, limits, broken input."""

from __future__ import annotations

import json
import struct

import msgpack
import pytest

from protocol import (
    MAX_BOT_FRAME,
    MAX_SERVER_FRAME,
    Decoder,
    Encoding,
    ErrorCode,
    FrameTooLargeError,
    MalformedFrameError,
    decode_one,
    encode,
)

HELLO = {"type": "hello", "protocol": 1, "token": "t", "name": "Болд"}
ACTION = {"type": "action", "match": "m", "id": 3, "action": ["7H", "AS"]}


def frame(body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + body


def test_msgpack_frame_is_a_big_endian_length_then_one_map():
    data = encode({"type": "bye"}, Encoding.MSGPACK)
    assert data == b"\x00\x00\x00\x0a" + b"\x81\xa4type\xa3bye"


def test_jsonl_is_compact_utf8_with_a_newline():
    assert encode(HELLO, Encoding.JSONL) == '{"type":"hello","protocol":1,"token":"t","name":"Болд"}\n'.encode()


@pytest.mark.parametrize("encoding", list(Encoding))
def test_frames_split_byte_by_byte_come_out_whole(encoding):
    decoder = Decoder(max_frame=MAX_BOT_FRAME, encoding=encoding)
    data = encode(HELLO, encoding) + encode(ACTION, encoding)
    out = []
    for i in range(len(data)):
        out += decoder.feed(data[i : i + 1])
    assert out == [HELLO, ACTION]
    assert decoder.buffered == 0


@pytest.mark.parametrize("encoding", list(Encoding))
def test_coalesced_frames_come_out_one_by_one(encoding):
    decoder = Decoder(max_frame=MAX_BOT_FRAME, encoding=encoding)
    decoder.receive_data(encode(HELLO, encoding) * 3 + encode(ACTION, encoding)[:5])
    assert list(decoder) == [HELLO, HELLO, HELLO]
    assert decoder.next_message() is None


def test_server_decoder_detects_jsonl_from_a_brace():
    decoder = Decoder.for_server()
    assert decoder.encoding is None
    assert decoder.feed(b"{") == []
    assert decoder.encoding is Encoding.JSONL
    assert decoder.feed(b'"type":"bye"}\n') == [{"type": "bye"}]


def test_server_decoder_defaults_to_msgpack():
    decoder = Decoder.for_server()
    assert decoder.feed(encode(HELLO, Encoding.MSGPACK)) == [HELLO]
    assert decoder.encoding is Encoding.MSGPACK


def test_no_bytes_yet_means_no_encoding_and_no_message():
    decoder = Decoder.for_server()
    assert decoder.feed(b"") == []
    assert decoder.encoding is None


def test_oversized_prefix_is_refused_before_the_body_arrives():
    decoder = Decoder.for_server()
    with pytest.raises(FrameTooLargeError) as caught:
        decoder.feed(struct.pack(">I", MAX_BOT_FRAME + 1))  # only the 4 prefix bytes
    assert caught.value.code == ErrorCode.FRAME_TOO_LARGE
    assert caught.value.closes_connection
    assert decoder.buffered == 0


def test_a_frame_exactly_at_the_limit_is_accepted():
    body = msgpack.packb({"type": "x", "pad": ""})
    body = msgpack.packb({"type": "x", "pad": "a" * (MAX_BOT_FRAME - len(body) - 2)})
    assert len(body) == MAX_BOT_FRAME
    assert Decoder.for_server().feed(frame(body))[0]["type"] == "x"


def test_client_decoder_accepts_large_server_frames_up_to_one_mib():
    big = {"type": "match_end", "reveal": ["x" * 1000] * 900}
    data = encode(big, Encoding.MSGPACK)
    assert MAX_BOT_FRAME < len(data) < MAX_SERVER_FRAME
    assert Decoder.for_client().feed(data) == [big]
    with pytest.raises(FrameTooLargeError):
        Decoder.for_client().feed(struct.pack(">I", MAX_SERVER_FRAME + 1))


def test_a_long_jsonl_line_is_refused_as_soon_as_it_is_too_long():
    decoder = Decoder.for_server()
    decoder.feed(b'{"type":"x","pad":"')
    decoder.feed(b"a" * (MAX_BOT_FRAME - 100))  # still within the limit
    with pytest.raises(FrameTooLargeError):
        decoder.feed(b"a" * 200)  # no newline yet, but already over


def test_a_long_jsonl_line_after_a_good_one_is_refused_too():
    decoder = Decoder.for_server()
    good = b'{"type":"bye"}\n'
    messages = decoder.feed(good + b"{" + b" " * (MAX_BOT_FRAME + 1))
    assert messages == [{"type": "bye"}]
    with pytest.raises(FrameTooLargeError):
        decoder.next_message()


def test_a_jsonl_line_at_the_limit_not_counting_the_newline_is_accepted():
    line = b'{"type":"x","pad":"' + b"a" * (MAX_BOT_FRAME - 21) + b'"}'
    assert len(line) == MAX_BOT_FRAME
    assert Decoder.for_server().feed(line + b"\n")[0]["type"] == "x"
    with pytest.raises(FrameTooLargeError):
        Decoder.for_server().feed(line[:-2] + b'a"}\n')


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b"\x00\x00\x00\x00", "empty frame"),
        (frame(msgpack.packb([1, 2])), "must be a map"),
        (frame(msgpack.packb("hello")), "must be a map"),
        (frame(msgpack.packb({1: "x"}, strict_types=False)), "keys must be strings"),
        (frame(msgpack.packb({"type": "x", "nested": {2: 3}})), "keys must be strings"),
        (frame(msgpack.packb({"type": b"bin"}, use_bin_type=True)), "binary"),
        (frame(b"\xc1"), "msgpack"),  # never-used type byte
        (frame(msgpack.packb({"a": 1}) + msgpack.packb({"b": 2})), "exactly one"),
        (frame(b"\x81\xa4type\xa3b\xff\xfe"), "msgpack"),  # invalid UTF-8 in a string
        (frame(msgpack.packb(msgpack.ExtType(5, b"x"))), "msgpack"),
    ],
)
def test_broken_msgpack_frames_are_malformed(data, why):
    decoder = Decoder.for_server()
    with pytest.raises(MalformedFrameError) as caught:
        decoder.feed(data)
    assert why in str(caught.value)
    assert caught.value.code == ErrorCode.MALFORMED


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b"{\n", "JSON"),
        (b'{"type": "x"} {"a":1}\n', "JSON"),
        (b'{"type":"\xff"}\n', "UTF-8"),
        (b'{"a":NaN}\n', "NaN"),
        (b"{}\n[1]\n", "must be a map"),
    ],
)
def test_broken_json_lines_are_malformed(data, why):
    decoder = Decoder.for_server()
    with pytest.raises(MalformedFrameError) as caught:
        decoder.feed(data)
        decoder.next_message()  # an error after good lines comes on the next call
    assert why in str(caught.value)


def test_a_non_object_json_line_is_malformed():
    decoder = Decoder(max_frame=MAX_BOT_FRAME, encoding=Encoding.JSONL)
    with pytest.raises(MalformedFrameError, match="must be a map"):
        decoder.feed(b"[1,2]\n")


def test_an_empty_json_line_is_malformed():
    decoder = Decoder(max_frame=MAX_BOT_FRAME, encoding=Encoding.JSONL)
    with pytest.raises(MalformedFrameError):
        decoder.feed(b"\n")


def test_a_broken_decoder_stays_broken():
    decoder = Decoder.for_server()
    with pytest.raises(MalformedFrameError):
        decoder.feed(b"\x00\x00\x00\x00")
    with pytest.raises(MalformedFrameError):
        decoder.feed(encode(HELLO, Encoding.MSGPACK))


def test_good_messages_before_a_bad_frame_are_not_lost():
    decoder = Decoder.for_server()
    assert decoder.feed(encode(HELLO, Encoding.MSGPACK) + b"\x00\x00\x00\x00") == [HELLO]
    with pytest.raises(MalformedFrameError):
        decoder.next_message()


def test_encode_with_a_limit_refuses_what_the_peer_would_refuse():
    with pytest.raises(FrameTooLargeError):
        encode({"type": "x", "pad": "a" * MAX_BOT_FRAME}, Encoding.MSGPACK, limit=MAX_BOT_FRAME)
    with pytest.raises(FrameTooLargeError):
        encode({"type": "x", "pad": "a" * MAX_BOT_FRAME}, Encoding.JSONL, limit=MAX_BOT_FRAME)


def test_encode_rejects_an_unknown_encoding():
    with pytest.raises(ValueError, match="unknown encoding"):
        encode({"type": "bye"}, "xml")


def test_decode_one_rejects_trailing_bytes():
    with pytest.raises(MalformedFrameError):
        decode_one(encode(HELLO, Encoding.JSONL) + b"{", Encoding.JSONL)
