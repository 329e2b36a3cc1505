"""The event envelope frames exactly what encode() would."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from arena.server.envelope import Envelope
from protocol.codec import Decoder, Encoding, encode

VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-2**40, 2**40) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=5),
    max_leaves=20)


@given(match=st.text(max_size=30), value=VALUES)
def test_envelope_bytes_equal_encode_of_the_whole_message(match, value):
    envelope = Envelope({"type": "event", "match": match}, "event")
    for encoding in (Encoding.MSGPACK, Encoding.JSONL):
        whole = {"type": "event", "match": match, "event": value}
        framed = envelope.frame(value, encoding)
        assert framed == encode(whole, encoding)
        decoder = Decoder.for_client(encoding)
        decoder.receive_data(framed)
        assert decoder.next_message() == whole


def test_a_key_already_in_the_head_is_refused():
    try:
        Envelope({"event": 1}, "event")
    except ValueError as exc:
        assert "event" in str(exc)
    else:  # pragma: no cover
        raise AssertionError("expected ValueError")
