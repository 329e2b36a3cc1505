"""Events and records as stored text: one encoding for the store, the live
hub and the match session, so an event is encoded once and the same text is
written to disk and sent to spectators.

Layer: bottom (imports nothing of the arena; the cached JSON encoder is the
codec's); storage, server and the live hub all use it.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec

from protocol.codec import cached_json_encode

# An event as stored: compact JSON without NaN, as the SQLite store writes it.
# Raises TypeError or ValueError for what is not plain JSON.
encode_record = cached_json_encode(json.JSONEncoder(separators=(",", ":"), allow_nan=False))

_plain_encoder = msgspec.json.Encoder()
_DEL = 0x7F  # printable ASCII ends below it; the standard encoder escapes it


def encode_plain_record(record: Any) -> str:
    """``encode_record(record)`` for a record of ints, bools, None and
    strings in lists and dicts (no floats: msgspec spells some of them
    differently), written by msgspec, several times faster than the
    standard encoder. For such values the two write the same text except
    in strings with a character outside printable ASCII, which the standard
    encoder escapes and msgspec does not; a text holding one is written
    again by ``encode_record``."""
    data = _plain_encoder.encode(record)
    # The DEL byte looked for as an int: ``b"\x7f" in data`` first tries its
    # operand as an int and builds (then drops) a TypeError with its message,
    # about 1,800 instructions for every record of every decision.
    if data.isascii() and _DEL not in data:
        return data.decode("ascii")
    return encode_record(record)
