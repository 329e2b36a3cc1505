"""Events and records as stored text: one encoding for the store, the live
hub and the match session, so an event is encoded once and the same text is
written to disk and sent to spectators.

Layer: bottom (imports nothing of the arena; the cached JSON encoder is the
codec's); storage, server and the live hub all use it.
"""

from __future__ import annotations

import json

from protocol.codec import cached_json_encode

# An event as stored: compact JSON without NaN, as the SQLite store writes it.
# Raises TypeError or ValueError for what is not plain JSON.
encode_record = cached_json_encode(json.JSONEncoder(separators=(",", ":"), allow_nan=False))
