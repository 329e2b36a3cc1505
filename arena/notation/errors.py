"""What goes wrong reading or replaying a notation file."""

from __future__ import annotations


class NotationError(Exception):
    """A notation file that cannot be read or does not replay; ``line`` is
    the 1-based line the problem is on (0: the file as a whole)."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}" if line else message)
        self.line = line
        self.reason = message


class NotationSyntaxError(ValueError):
    """One token or line is not written as the grammar says (no line number
    yet: the reader adds it)."""


class NotWritableError(ValueError):
    """A match that has no notation (yet): unfinished, or its decks not revealed."""
