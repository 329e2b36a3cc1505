"""The plain ``action`` frame as a msgspec type (see :mod:`arena.server.inbound`).

Apart from the compiled :mod:`~arena.server.inbound`: msgspec builds its
decoder from the class's annotations, and defined in the compiled module
the class gave a decoder that refused valid frames (``Expected `type`, got
`list``` for an array answer).
"""

from __future__ import annotations

import msgspec


class PlainAction(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """An ``action`` message with a flat answer. Unknown fields are refused
    (not skipped): the SDK decoder checks every value of a frame, and a
    skipped field would go unchecked. ``gc=False``: strings and lists of
    strings make no cycles. (Not msgspec's tag for ``type``: a tagged
    struct takes a frame without the tag.)"""

    type: str
    match: str
    id: int
    action: str | None | list[str]
