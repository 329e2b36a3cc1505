"""The common read, decoded in C: whole msgpack frames of plain actions.

Almost every read a playing bot's connection gets is one whole frame
holding one ``action`` whose answer is a string, ``null`` or an array of
strings (every Muushig decision). :func:`plain_actions` decodes such a read
with one typed msgspec decoder, which checks the fields while it reads the
bytes, instead of the SDK decoder's buffer, its generic msgpack decode and
the walk over the value.

It only ever says yes or "not mine": anything else -- part of a frame, a
frame of any other message, a field of another type, an unknown field,
bad bytes -- gives ``None``, and the connection hands the same bytes to
the SDK decoder, which reads them or names what is wrong exactly as it
always has. ``tests/server/test_inbound.py`` holds the two to the same
answer over random and broken frames.
"""

from __future__ import annotations

from typing import Final

import msgspec

from arena.server.action_frame import PlainAction


# Made here, where it is used: a module constant of compiled code is a C
# constant, not a dict lookup per call.
_decode: Final = msgspec.msgpack.Decoder(PlainAction).decode
_Error: Final = msgspec.MsgspecError


def plain_actions(data: bytes, max_frame: int) -> list[PlainAction] | None:
    """The actions in ``data`` if it is nothing but whole frames (4-byte
    big-endian length, then a msgpack map) of plain actions, each of at
    most ``max_frame`` bytes; else ``None``."""
    actions: list[PlainAction] = []
    start = 0
    total = len(data)
    while start < total:
        body = start + 4
        if body > total:
            return None
        size = (data[start] << 24) | (data[start + 1] << 16) | (data[start + 2] << 8) | data[start + 3]
        end = body + size
        if size == 0 or size > max_frame or end > total:
            return None
        try:
            action = _decode(data[body:end])
        except _Error:
            return None
        if action.type != "action":
            return None
        actions.append(action)
        start = end
    return actions if actions else None
