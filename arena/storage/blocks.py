"""A match's events on their way into one ``event_blocks`` row (sans-IO).

The store writer collects each running match's events on the event loop in
a :class:`PendingBlock` and hands all of them to its thread now and then;
the store turns each into one row (:mod:`arena.storage.events`).
"""

from __future__ import annotations

import json
import math
from typing import Any

import msgspec

from arena.storage.base import StorageError

# One encoder for every value: json.dumps with options builds a new one per call.
dumps = json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode

Row = tuple[int, float, str]  # (seq, at, the event as JSON text)


# Numbers the store writes for every step and decision (a step's time, the
# seats' latencies) go through msgspec's encoder: the standard one spells a
# float through repr, which cost more than the rest of the step's record.
number_json = msgspec.json.Encoder().encode


def time_text(match_id: str, seq: int, at: Any) -> str:
    """``at`` as a JSON number; StorageError if it is not a finite number."""
    if type(at) is bool or not isinstance(at, (int, float)) or not math.isfinite(at):
        raise StorageError(f"match {match_id!r}: event seq {seq} has no valid time "
                           f"({at!r} is not a finite number)")
    return number_json(at).decode("ascii")


class PendingBlock:
    """The events of one match that one ``event_blocks`` row will hold, as
    the store writer collects them on the event loop.

    A table hands over a step's records as JSON texts with one time for the
    step. Collecting them costs three list operations and no object per
    event; the texts are joined once, when the row is built on the writer's
    thread. ``first_seq`` is where the block starts; a step whose seqs do
    not continue the block is kept as ``gap`` and refuses the whole block,
    with the message a stored log refusing it would give.
    """

    __slots__ = ("first_seq", "next_seq", "texts", "times", "sizes", "gap")

    def __init__(self, first_seq: int) -> None:
        self.first_seq = first_seq
        self.next_seq = first_seq
        self.texts: list[str] = []
        self.times: list[Any] = []  # one per step ...
        self.sizes: list[int] = []  # ... and how many of the texts it stamps
        self.gap: tuple[int, int] | None = None  # (seq, the seq expected)

    def __len__(self) -> int:
        return len(self.texts)

    def add(self, first_seq: int, at: Any, texts: list[str]) -> None:
        """Append a step's records, numbered ``first_seq``, ``first_seq + 1``...
        and all stamped ``at``."""
        if first_seq != self.next_seq and self.gap is None:
            self.gap = (first_seq, self.next_seq)
        self.texts += texts
        self.times.append(at)
        self.sizes.append(len(texts))
        self.next_seq = first_seq + len(texts)

    def check(self, match_id: str, expected: int) -> None:
        """StorageError unless the block continues a log whose next seq is
        ``expected`` and has no gap of its own."""
        if self.first_seq != expected:
            raise _discontinuous(match_id, self.first_seq, expected)
        if self.gap is not None:
            raise self.gap_error(match_id)

    def gap_error(self, match_id: str) -> StorageError:
        assert self.gap is not None
        return _discontinuous(match_id, *self.gap)

    def row(self, match_id: str) -> tuple[str, int, int, str, str]:
        """The ``event_blocks`` row: (match_id, first_seq, last_seq, ats, data)."""
        ats: list[str] = []
        seq = self.first_seq
        for at, size in zip(self.times, self.sizes):
            ats += [time_text(match_id, seq, at)] * size
            seq += size
        return (match_id, self.first_seq, self.first_seq + len(self.texts) - 1,
                "[" + ",".join(ats) + "]", "[" + ",".join(self.texts) + "]")

    def rows(self) -> list[Row]:
        """The events as ``(seq, at, JSON text)`` rows, numbered on from
        ``first_seq`` (a block with a ``gap`` is refused whole anyway)."""
        times = [at for at, size in zip(self.times, self.sizes) for _ in range(size)]
        return [(self.first_seq + i, at, text)
                for i, (at, text) in enumerate(zip(times, self.texts))]


def _discontinuous(match_id: str, seq: int, expected: int) -> StorageError:
    return StorageError(
        f"match {match_id!r}: event seq {seq} does not continue the log "
        f"(expected {expected}); events are append-only and numbered 0, 1, 2...")


def pending_of(rows: list[Row]) -> PendingBlock:
    """A block of ``(seq, at, JSON text)`` rows (at least one)."""
    pending = PendingBlock(rows[0][0])
    last: Any = None
    for seq, at, text in rows:
        if pending.texts and seq == pending.next_seq and at == last and type(at) is type(last):
            # Events of one decision share their time: it is encoded once.
            pending.texts.append(text)
            pending.sizes[-1] += 1
            pending.next_seq += 1
        else:
            pending.add(seq, at, [text])
            last = at
    return pending
