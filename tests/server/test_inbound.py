"""The C read of plain actions gives what the SDK decoder gives, or declines.

The connection reads a playing bot's usual bytes with
``arena.server.inbound.plain_actions`` and hands everything it declines to
the SDK decoder. So the one rule here: whenever it answers, the decoder
reads the same bytes as the same actions with no error and nothing left
over. Random frames are built pair by pair (so a key can come twice) from
every kind of msgpack value, then cut, joined and corrupted.
"""

from __future__ import annotations

from typing import Any

import msgpack
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.server.inbound import plain_actions
from protocol.codec import MAX_BOT_FRAME, Decoder, Encoding
from protocol.errors import FrameError, ProtocolError
from protocol.messages import action_fields

INT = st.integers(min_value=-(1 << 63), max_value=(1 << 64) - 1)
SCALAR = st.one_of(st.none(), st.booleans(), INT, st.floats(), st.text(max_size=8),
                   st.binary(max_size=4),
                   st.builds(msgpack.ExtType, st.integers(0, 5), st.binary(max_size=8)),
                   st.builds(msgpack.Timestamp, st.integers(0, 1 << 33), st.integers(0, 999)))
VALUE = st.recursive(SCALAR, lambda inner: st.one_of(
    st.lists(inner, max_size=3),
    st.dictionaries(st.one_of(st.text(max_size=4), st.integers(0, 3)), inner, max_size=3)),
    max_leaves=6)
CARD = st.sampled_from(["7S", "QH", "AD", "TC", "", "é", "\x00"])
PLAIN = st.one_of(st.none(), CARD, st.lists(CARD, max_size=5))
FIELDS = ("type", "match", "id", "action")


def _pack(value: Any) -> bytes:
    return msgpack.packb(value, use_bin_type=True)


def frame(pairs: list[tuple[Any, Any]]) -> bytes:
    body = msgpack.Packer().pack_map_header(len(pairs)) + b"".join(
        _pack(key) + _pack(value) for key, value in pairs)
    return len(body).to_bytes(4, "big") + body


@st.composite
def plain_pairs(draw: st.DrawFn) -> list[tuple[Any, Any]]:
    """A well-formed plain action, keys in any order."""
    pairs = [("type", "action"), ("match", draw(st.text(max_size=12))), ("id", draw(INT)),
             ("action", draw(PLAIN))]
    return draw(st.permutations(pairs))


@st.composite
def odd_pairs(draw: st.DrawFn) -> list[tuple[Any, Any]]:
    """An action map with some field missing, twice, of another kind, or extra."""
    pairs = draw(plain_pairs())
    for _ in range(draw(st.integers(1, 3))):
        change = draw(st.sampled_from(["drop", "again", "retype", "extra"]))
        if change == "drop" and pairs:
            pairs.pop(draw(st.integers(0, len(pairs) - 1)))
        elif change == "again":
            pairs.append((draw(st.sampled_from(FIELDS)), draw(st.one_of(PLAIN, VALUE))))
        elif change == "retype" and pairs:
            index = draw(st.integers(0, len(pairs) - 1))
            pairs[index] = (pairs[index][0], draw(st.one_of(VALUE, st.sampled_from(
                ["hello", "bye", "Action", "action "]))))
        else:
            pairs.append((draw(st.one_of(st.text(max_size=5), INT, st.none())),
                          draw(VALUE)))
    return pairs


@st.composite
def reads(draw: st.DrawFn) -> bytes:
    frames = draw(st.lists(st.one_of(plain_pairs(), odd_pairs()).map(frame),
                           min_size=1, max_size=3))
    data = bytearray(b"".join(frames))
    for _ in range(draw(st.integers(0, 2))):
        cut = draw(st.sampled_from(["none", "truncate", "append", "flip", "length"]))
        if cut == "truncate" and data:
            del data[draw(st.integers(0, len(data) - 1)):]
        elif cut == "append":
            data += draw(st.binary(min_size=1, max_size=6))
        elif cut == "flip" and data:
            data[draw(st.integers(0, len(data) - 1))] ^= 1 << draw(st.integers(0, 7))
        elif cut == "length" and len(data) >= 4:
            data[:4] = draw(st.integers(0, (1 << 32) - 1)).to_bytes(4, "big")
    return bytes(data)


def decoder_reading(data: bytes) -> tuple[list[tuple[str, int, Any]], str]:
    """What the SDK decoder makes of ``data`` on a connection past its hello:
    the actions' fields, and "ok", "error" or "partial"."""
    decoder = Decoder(max_frame=MAX_BOT_FRAME, encoding=Encoding.MSGPACK)
    found: list[tuple[str, int, Any]] = []
    try:
        decoder.receive_data(data)
        while (message := decoder.next_message()) is not None:
            if message.get("type") != "action":
                return found, "error"
            found.append(action_fields(message))
    except (FrameError, ProtocolError):
        return found, "error"
    return found, "partial" if decoder.buffered else "ok"


def read(data: bytes) -> list[tuple[str, int, Any]] | None:
    actions = plain_actions(data, MAX_BOT_FRAME)
    return None if actions is None else [(a.match, a.id, a.action) for a in actions]


@settings(max_examples=1500, deadline=None)
@given(reads())
def test_an_answer_is_the_decoders_reading(data: bytes) -> None:
    fast = read(data)
    if fast is not None:
        assert decoder_reading(data) == (fast, "ok")


@settings(max_examples=300, deadline=None)
@given(st.lists(plain_pairs(), min_size=1, max_size=4))
def test_whole_plain_actions_are_read(frames: list[list[tuple[Any, Any]]]) -> None:
    data = b"".join(frame(pairs) for pairs in frames)
    assert read(data) == decoder_reading(data)[0]
    assert len(read(data) or []) == len(frames)


def test_a_key_given_twice_counts_its_last_value_as_the_decoder_does() -> None:
    data = frame([("type", "action"), ("match", "m"), ("id", 1), ("action", "7S"),
                  ("id", 2)])
    assert read(data) == decoder_reading(data)[0] == [("m", 2, "7S")]


def test_part_of_a_frame_is_left_to_the_decoder() -> None:
    data = frame([("type", "action"), ("match", "m"), ("id", 1), ("action", "7S")])
    for end in range(len(data)):
        assert read(data[:end]) is None
    assert read(data + data[:5]) is None


def test_other_messages_and_values_are_left_to_the_decoder() -> None:
    base = [("type", "action"), ("match", "m"), ("id", 1)]
    declined = [
        [("type", "bye")],
        [*base],  # no answer
        [*base, ("action", 1.5)],  # a float: the decoder refuses it
        [*base, ("action", b"7S")],  # msgpack bin
        [*base, ("action", {"cards": ["7S"]})],  # nested map
        [*base, ("action", [["7S"]])],  # a thirteen-style arrangement
        [*base, ("action", True)],
        [*base, ("action", "7S"), ("note", "hi")],  # unknown field: unchecked otherwise
        [("type", "action"), ("match", "m"), ("id", True), ("action", "7S")],
    ]
    for pairs in declined:
        assert read(frame(pairs)) is None, pairs


def test_bad_utf8_and_surrogates_are_left_to_the_decoder() -> None:
    head = frame([("type", "action"), ("id", 1), ("action", "7S")])[4:]
    for raw in (b"\xff", b"\xed\xa0\x80", b"\xc0\x80"):
        body = bytearray(head)
        body[0] += 1  # one more pair: match, as a str of raw bytes
        body += _pack("match") + bytes([0xa0 | len(raw)]) + raw
        data = len(body).to_bytes(4, "big") + bytes(body)
        assert read(data) is None
        assert decoder_reading(data)[1] == "error"


def test_an_empty_or_oversized_frame_is_left_to_the_decoder() -> None:
    assert read(b"") is None
    assert read(b"\x00\x00\x00\x00") is None
    body = frame([("type", "action"), ("match", "m" * MAX_BOT_FRAME), ("id", 1),
                  ("action", "7S")])
    assert read(body) is None
