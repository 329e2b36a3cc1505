"""A step's time is stored as the JSON the standard encoder writes for it:
the fast spelling (msgspec, for the timestamps a server makes) gives the
same text, and every other number takes the encoder's."""

from __future__ import annotations

import math
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.storage.base import StorageError
from arena.storage.blocks import dumps, float_lists_text, time_text


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_every_finite_float_is_written_as_the_encoder_writes_it(at):
    assert time_text("m", 0, at) == dumps(at)


@given(st.floats(min_value=1e-4, max_value=1e16, exclude_max=True))
def test_the_fast_range_is_written_as_the_encoder_writes_it(at):
    assert time_text("m", 0, at) == dumps(at)


def test_timestamps_and_the_edges_of_the_fast_range():
    now = time.time()
    values = [now, now + 0.1, round(now, 3), 2000.0, 0.0, -0.0, 1e-4, math.nextafter(1e-4, 0),
              9.999999999999998e15, 1e16, -1.5, 5e-324, 1.7976931348623157e308, 0.1]
    for at in values:
        assert time_text("m", 0, at) == dumps(at), at


def test_ints_are_written_as_ints():
    assert time_text("m", 0, 2000) == "2000"


@pytest.mark.parametrize("at", [math.nan, math.inf, -math.inf, None, "1.0", True])
def test_what_is_no_time_is_refused_naming_the_event(at):
    with pytest.raises(StorageError, match="seq 7 has no valid time"):
        time_text("m", 7, at)


@given(st.lists(st.lists(st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.floats(min_value=0.0, max_value=60_000.0),
    st.integers(0, 10**6)), max_size=30), max_size=6))
def test_latency_lists_are_written_as_the_encoder_writes_them(lists):
    assert float_lists_text(lists) == dumps(lists)


def test_latencies_of_zero_and_negative_zero_are_written_as_the_encoder_writes_them():
    lists = [[0.0, -0.0, 12.5], [], [3e-05, 1234.567]]
    assert float_lists_text(lists) == dumps(lists)
