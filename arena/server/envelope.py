"""A table's framing of its messages to bots, compiled with the table.

A table wraps every event as ``{"type": "event", "match": id, "event":
...}``: the head is encoded once here, so each event costs one msgpack
encoding of its value plus a concatenation. The bytes are exactly those of
:func:`protocol.codec.encode` on the whole message (same key order), which
``tests/server/test_envelope.py`` holds it to. It lives with the server,
not in the SDK, because only the server sends events, and compiled it saves
the Python calls a frame cost on every decision.
"""

from __future__ import annotations

from typing import Any, Final

from protocol.codec import Encoding, encode, pack_msgpack

# Bound here: a module constant of compiled code is a C constant.
_pack: Final = pack_msgpack
_MSGPACK: Final = Encoding.MSGPACK


class Envelope:
    """Frames ``{**head, key: value}`` when only ``value`` changes."""

    def __init__(self, head: dict[str, Any], key: str) -> None:
        if key in head:
            raise ValueError(f"key {key!r} is already in the head")
        self._head = dict(head)
        self._key = key
        # A map header, then the head's pairs and the key: what msgpack
        # writes before the value of ``{**head, key: value}``.
        self._msgpack_head: bytes = _pack({**head, key: None})[:-1]  # without the nil

    def frame(self, value: Any, encoding: Encoding | str) -> bytes:
        """The wire bytes of ``{**head, key: value}``."""
        if encoding == _MSGPACK:
            body = self._msgpack_head + _pack(value)
            return len(body).to_bytes(4, "big") + body
        return encode({**self._head, self._key: value}, encoding)

    def encode(self, message: dict[str, Any], encoding: Encoding | str) -> bytes:
        """Like :func:`protocol.codec.encode` without its size limit (the
        server's own messages)."""
        if encoding == _MSGPACK:
            body = _pack(message)
            return len(body).to_bytes(4, "big") + body
        return encode(message, encoding)
