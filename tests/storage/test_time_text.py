"""A step's time is stored as a JSON number that reads back as the same
value, and what is no finite number is refused naming the event."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.storage.base import StorageError
from arena.storage.blocks import number_json, time_text


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_every_finite_time_reads_back_as_itself(at):
    assert json.loads(time_text("m", 0, at)) == at


def test_ints_are_written_as_ints():
    assert time_text("m", 0, 2000) == "2000"


@pytest.mark.parametrize("at", [math.nan, math.inf, -math.inf, None, "1.0", True])
def test_what_is_no_time_is_refused_naming_the_event(at):
    with pytest.raises(StorageError, match="seq 7 has no valid time"):
        time_text("m", 7, at)


@given(st.lists(st.lists(st.floats(min_value=0.0, max_value=1e7), max_size=20), max_size=6))
def test_latency_lists_read_back_as_themselves(lists):
    assert json.loads(number_json(lists)) == lists
