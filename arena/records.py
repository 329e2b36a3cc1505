"""Events and records as stored text: one encoding for the store, the live
hub and the match session, so an event is encoded once and the same text is
written to disk and sent to spectators.

Layer: bottom (imports nothing of the arena); storage, server and the live
hub all use it.
"""

from __future__ import annotations

import json
from typing import Any, Callable


def _record_encoder() -> Callable[[Any], str]:
    """Compact JSON without NaN, as the SQLite store writes it.

    ``JSONEncoder.encode`` builds its C encoder anew on every call, which
    costs as much as encoding a small event; here it is built once. Without
    the C accelerator the plain encoder is used."""
    encoder = json.JSONEncoder(separators=(",", ":"), allow_nan=False)
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return encoder.encode
    # No circular-reference check (markers=None): events are plain trees.
    iterencode = make(None, encoder.default, json.encoder.encode_basestring_ascii, None,
                      ":", ",", False, False, False)

    def encode(value: Any) -> str:
        return "".join(iterencode(value, 0))

    return encode


# An event as stored. Raises TypeError or ValueError for what is not plain JSON.
encode_record = _record_encoder()
