"""A portable text notation for matches of every game (docs/notation.md).

``write_notation`` turns a finished match (its wire form and stored
records) into text; ``parse_notation`` reads it back strictly;
``replay_notation`` re-plays it through the game's engine and checks every
deck against its commitment. Pure: no store, no clock, no I/O.
"""

from arena.notation.document import FORMAT_LINE, Notation, parse_notation, write_notation
from arena.notation.errors import NotationError, NotWritableError
from arena.notation.replay import Replayed, replay_notation

__all__ = ["FORMAT_LINE", "Notation", "NotationError", "NotWritableError", "Replayed",
           "parse_notation", "replay_notation", "write_notation"]
