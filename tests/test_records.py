"""A record of ints, bools, None and strings is stored as the standard JSON
encoder writes it (``encode_record``), whichever encoder writes it."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from arena.records import encode_plain_record, encode_record

SCALARS = st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.text()
PLAIN = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=6)
                     | st.dictionaries(st.text(), inner, max_size=6), max_leaves=30)


@settings(max_examples=500, deadline=None)
@given(record=PLAIN)
def test_a_plain_record_is_written_as_the_standard_encoder_writes_it(record):
    assert encode_plain_record(record) == encode_record(record)


def test_characters_the_standard_encoder_escapes_are_escaped():
    for char in ["\x00", "\n", "\x1f", '"', "\\", "/", "\x7f", "é", "\u2028", "\U0001f0a1"]:
        record = {"kind": "decision", "choice": f"a{char}b", char: [char]}
        assert encode_plain_record(record) == encode_record(record), repr(char)
