"""A step's time is stored as the JSON the standard encoder writes for it,
and what is no finite number is refused naming the event."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.storage.base import StorageError
from arena.storage.blocks import dumps, time_text


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_every_finite_float_is_written_as_the_encoder_writes_it(at):
    assert time_text("m", 0, at) == dumps(at)


def test_ints_are_written_as_ints():
    assert time_text("m", 0, 2000) == "2000"


@pytest.mark.parametrize("at", [math.nan, math.inf, -math.inf, None, "1.0", True])
def test_what_is_no_time_is_refused_naming_the_event(at):
    with pytest.raises(StorageError, match="seq 7 has no valid time"):
        time_text("m", 7, at)
