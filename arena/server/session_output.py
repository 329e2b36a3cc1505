"""What a match session sends: per-seat bytes, records, public events.

Every event of a :class:`arena.server.session.MatchSession`
goes to each seat in the form it may see (buffered until the seat's next
request, a hand's end, a timeout or autopilot), to storage as its full
record and to spectators in its public form. A public payload is encoded
once per encoding for all seats, each record once as JSON. What one input
produced is handed over as one :class:`SessionStep`, with at most one
write per seat. The session owns a :class:`SessionOutput` and delegates
its sending to it; the table only executes the steps.
"""

from __future__ import annotations

import os
from typing import Any, Final, Iterable

from arena.games.base import DealInfo, GameEvent
from arena.metrics import Metrics
from arena.records import encode_record
from arena.server.seats import AutopilotReason
from arena.server.envelope import Envelope
from protocol.codec import Encoding
from protocol.deals import commitment
from protocol.errors import ErrorCode
from protocol.messages import Error, MatchEnd, MatchStart
from protocol.messages import Limits as WireLimits

# Events for a seat wait in its buffer and go out in one write: with its
# next request, at the end of every hand, at a timeout or autopilot, or once
# this many are waiting. A bot needs them before it acts, not sooner; one
# write per seat per hand instead of one per event keeps many tables cheap.
FLUSH_AT_EVENTS: Final = 32
FLUSH_KINDS: Final = frozenset({"hand_end", "round_end", "timeout", "autopilot"})



class SeatWrite:
    """The bytes one step sends one seat: a single write on its connection.

    A plain class, not a dataclass, like :class:`SessionStep` (and
    ``arena.server.seats.PendingRequest``): one or more are made per
    decision, and a compiled dataclass still builds its instances through
    the interpreted ``__init__`` the dataclass machinery writes.
    """

    __slots__ = ("seat", "data", "holds_request")

    def __init__(self, seat: int, data: bytes, holds_request: bool = False) -> None:
        self.seat = seat
        self.data = data
        self.holds_request = holds_request  # the connection credits its bot's budget for the answer

    def __repr__(self) -> str:
        return (f"SeatWrite(seat={self.seat!r}, data={self.data!r}, "
                f"holds_request={self.holds_request!r})")


class SessionStep:
    """What one input to the session asks of its driver, to be done in this
    order: send each write, store the records (seq order), show the public
    events (each with its record text when the public form is the record,
    for the live hub to reuse), note the autopilot changes (seat, reason;
    None: the bot is back), then run house moves on a later turn when
    ``house_due``, call ``deadline`` at ``next_deadline`` and stop feeding
    the session once ``over``.

    A plain class with its ``__init__`` written out, not a dataclass: one is
    made per input, and the dataclass machinery's ``__init__`` (four
    ``default_factory`` lists) ran as interpreted code even in the compiled
    build, about 2 % of a decision's instructions.
    """

    __slots__ = ("writes", "records", "public", "autopilot", "next_deadline", "house_due",
                 "over")

    def __init__(self) -> None:
        self.writes: list[SeatWrite] = []
        self.records: list[str] = []
        self.public: list[tuple[dict[str, Any], str | None]] = []
        self.autopilot: list[tuple[int, AutopilotReason | None]] = []
        self.next_deadline: float | None = None
        self.house_due = False
        self.over = False

    def __repr__(self) -> str:
        return (f"SessionStep(writes={self.writes!r}, records={self.records!r}, "
                f"public={self.public!r}, autopilot={self.autopilot!r}, "
                f"next_deadline={self.next_deadline!r}, house_due={self.house_due!r}, "
                f"over={self.over!r})")


# Salts come from the OS's random source like ``protocol.deals.new_salt``
# (16 bytes, 32 hex digits), read 256 at a time: one ``getrandom`` call per
# deal cost more than the rest of the deal's bookkeeping. Used on the loop
# thread only.
_SALT_BYTES: Final = 16
_SALT_POOL: Final = 256
_salt_pool: Final[list[bytes]] = []


def _new_salt() -> str:
    if not _salt_pool:
        raw = os.urandom(_SALT_BYTES * _SALT_POOL)
        _salt_pool.extend(raw[i:i + _SALT_BYTES] for i in range(0, len(raw), _SALT_BYTES))
    return _salt_pool.pop().hex()


class ServerEvent:
    """An event the server adds (commit, timeout, autopilot): public."""

    __slots__ = ("kind", "payload")

    def __init__(self, kind: str, **fields: Any) -> None:
        self.kind = kind
        self.payload = {"kind": kind, **fields}

    def for_seat(self, seat: int) -> dict[str, Any]:
        return self.payload

    def for_public(self) -> dict[str, Any]:
        return self.payload

    def for_record(self) -> dict[str, Any]:
        return self.payload

    def record_text(self) -> str:
        return encode_record(self.payload)


class SessionOutput:
    """What one match sends, built up into one :class:`SessionStep` at a time.

    The session owns one (``MatchSession.output``) and tells it what to
    send; it encodes, buffers each seat's events until they are due and
    gathers everything of one input into the step the session hands its
    driver (:meth:`take`). It decides nothing about the match: who is asked
    what, and when, is the session's.

    ``encodings[i]`` is seat i's encoding, None while nobody reads it (a
    house seat, a bot that left); the session changes it only through
    :meth:`seat_left` and :meth:`seat_back`.
    """

    def __init__(self, match_id: str, game: str, encodings: list[Encoding | None],
                 metrics: Metrics | None = None, sealed: bool = False) -> None:
        self.match_id = match_id
        self.game = game
        self.metrics = metrics
        self.encodings = list(encodings)
        self._buffers: list[list[bytes]] = [[] for _ in encodings]
        # The step being built, and each seat's write in it (None: none yet).
        self._out = SessionStep()
        self._write_of: list[SeatWrite | None] = [None] * len(encodings)
        self._salts: dict[tuple[Any, ...], str] = {}
        # The latest deal's commit: sent again to a seat that comes back, so a
        # bot that checks commitments can check the deal it returns into.
        self._current_commit: ServerEvent | None = None
        self._envelope = Envelope({"type": "event", "match": match_id}, "event")
        # The seats emit writes to, kept until ``encodings`` changes (a seat
        # leaves or comes back): compared, not rebuilt, on every step.
        self._targets_of: list[Encoding | None] = []
        self._targets: list[tuple[int, Encoding]] = []
        self._silenced = False  # after match_end: nothing more of this match
        # Sealed (protocol §6): a later match of the tournament deals these
        # decks again, so match_end leaves the reveal out and events that
        # show other seats' cards (a thirteen showdown) go out in their
        # sealed form; the full forms reach the bots with the deferred reveal.
        self.sealed = sealed

    # -- the step ---------------------------------------------------------------
    def take(self, next_deadline: float | None, house_due: bool, over: bool) -> SessionStep:
        """The step built so far, completed with the session's state and
        handed over; the next step starts empty."""
        out = self._out
        write_of = self._write_of
        for write in out.writes:
            write_of[write.seat] = None
        self._out = SessionStep()
        out.next_deadline = next_deadline
        out.house_due = house_due
        out.over = over
        return out

    def record(self, text: str) -> None:
        """A record of the session's own (not an event's) for storage."""
        self._out.records.append(text)

    def autopilot_changed(self, seat_index: int, reason: AutopilotReason | None) -> None:
        """Tell the driver a seat went on autopilot (None: its bot is back)."""
        self._out.autopilot.append((seat_index, reason))

    def seat_left(self, seat_index: int) -> None:
        """Nobody reads this seat any more; what waited for it is dropped."""
        self.encodings[seat_index] = None
        self._buffers[seat_index].clear()

    def seat_back(self, seat_index: int, encoding: Encoding) -> None:
        """A connection reads this seat again, starting afresh."""
        self.encodings[seat_index] = encoding
        self._buffers[seat_index].clear()

    def _write(self, seat_index: int, data: bytes, request: bool) -> None:
        """Add bytes to the seat's one write of this step (order kept)."""
        write = self._write_of[seat_index]
        if write is None:
            write = self._write_of[seat_index] = SeatWrite(seat_index, data, request)
            self._out.writes.append(write)
        else:
            write.data += data
            if request:
                write.holds_request = True

    # -- sending ------------------------------------------------------------------
    def emit(self, events: Iterable[GameEvent]) -> None:
        """Forward events: each seat what it may see, storage everything,
        spectators the public form. Each distinct payload is encoded once
        per encoding for all seats, and each record once as JSON (storage
        and the live hub share that text when the public form is the record)."""
        out = self._out
        records = out.records
        public_log = out.public
        encodings = self.encodings
        if encodings != self._targets_of:
            self._targets_of = list(encodings)
            self._targets = [(index, encoding) for index, encoding in enumerate(encodings)
                             if encoding is not None]
        targets = self._targets
        buffers = self._buffers
        frame = self._envelope.frame
        flush = False
        for event in events:
            if event.kind == "deal":
                records.append(record_text(event))
                event = self._commit(event)
            elif self.sealed and hasattr(event, "sealed_for_seat"):
                event = SealedEvent(event)
            record = event.for_record()
            text = record_text(event)
            records.append(text)
            public = event.for_public()
            if public is not None:
                public_log.append((public, text if public is record else None))
            # A public event gives every seat the same dict: encoded once.
            last: Any = None
            last_encoding: Any = None
            data = b""
            for index, encoding in targets:
                payload = event.for_seat(index)
                if payload is None:
                    continue
                if payload is not last or encoding is not last_encoding:
                    data = frame(payload, encoding)
                    last, last_encoding = payload, encoding
                chunks = buffers[index]
                chunks.append(data)
                if len(chunks) >= FLUSH_AT_EVENTS:
                    flush = True
            if event.kind in FLUSH_KINDS:
                flush = True
        if flush:
            self.flush_all()

    def flush_all(self) -> None:
        """Every seat's buffered events go out in this step."""
        for index, chunks in enumerate(self._buffers):
            if chunks:
                self._write(index, b"".join(chunks) if len(chunks) > 1 else chunks[0], False)
                chunks.clear()

    def send_request(self, seat_index: int, wire: dict[str, Any]) -> None:
        """A request, after the seat's buffered events, in this step."""
        encoding = self.encodings[seat_index]
        if encoding is None:
            return
        chunks = self._buffers[seat_index]
        chunks.append(self._envelope.encode(wire, encoding))
        data = b"".join(chunks) if len(chunks) > 1 else chunks[0]
        chunks.clear()
        # Bytes for this seat may already wait in this step (a hand's end
        # was flushed to every seat): the request joins them, one write.
        self._write(seat_index, data, True)

    def send_match_start(self, seat_index: int, players: tuple[str, ...],
                         rules: dict[str, Any], limits: WireLimits) -> None:
        encoding = self.encodings[seat_index]
        if encoding is None:
            return
        message = MatchStart(self.match_id, self.game, seat_index, players, rules,
                             limits).to_wire()
        self._write(seat_index, self._envelope.encode(message, encoding), False)

    def send_error(self, seat_index: int, code: ErrorCode, message: str,
                   request_id: int) -> None:
        if self.metrics is not None:
            self.metrics.error(code.value)
        encoding = self.encodings[seat_index]
        if encoding is not None and not self._silenced:  # sent at once, before events still buffered
            wire = Error(code, message, request_id, self.match_id).to_wire()
            self._write(seat_index, self._envelope.encode(wire, encoding), False)

    def _commit(self, deal_event: GameEvent) -> ServerEvent:
        deal = deal_event.deal  # type: ignore[attr-defined]
        salt = _new_salt()
        self._salts[_key(deal.label)] = salt
        event = ServerEvent("commit", **deal.label, commitment=commitment(salt, deal.deck))
        self._current_commit = event
        return event

    def resend_commit(self, seat_index: int) -> None:
        """The current deal's ``commit`` again, to a seat that came back
        (after its ``match_start``, before anything else of the match)."""
        encoding = self.encodings[seat_index]
        commit = self._current_commit
        if encoding is None or commit is None or self._silenced:
            return
        self._write(seat_index, self._envelope.frame(commit.payload, encoding), False)

    def send_match_end(self, result: dict[str, Any] | None,
                       reveal: list[dict[str, Any]] | None) -> None:
        """``match_end`` to every connected seat; nothing of the match after it."""
        self._silenced = True
        if self.sealed:
            message = MatchEnd(self.match_id, result or {}, [], reveal_deferred=True).to_wire()
        else:
            message = MatchEnd(self.match_id, result or {}, reveal or []).to_wire()
        encoded: dict[Encoding, bytes] = {}
        for index, encoding in enumerate(self.encodings):
            if encoding is not None:
                data = encoded.get(encoding)
                if data is None:
                    data = encoded[encoding] = self._envelope.encode(message, encoding)
                self._write(index, data, False)

    def reveal(self, deals: Iterable[DealInfo]) -> list[dict[str, Any]]:
        """Each committed deal with its salt and deck, for ``match_end``."""
        return [{**d.label, "salt": self._salts[_key(d.label)], "deck": list(d.deck)}
                for d in deals]


class SealedEvent:
    """An event of a sealed match in its sealed forms (``sealed_for_seat``,
    ``sealed_for_public`` of the game's event); stored in full."""

    __slots__ = ("event", "kind")

    def __init__(self, event: Any) -> None:
        self.event = event
        self.kind = event.kind

    def for_seat(self, seat: int) -> dict[str, Any] | None:
        return self.event.sealed_for_seat(seat)  # type: ignore[no-any-return]

    def for_public(self) -> dict[str, Any] | None:
        return self.event.sealed_for_public()  # type: ignore[no-any-return]

    def for_record(self) -> dict[str, Any]:
        return self.event.for_record()  # type: ignore[no-any-return]

    def record_text(self) -> str:
        return record_text(self.event)


def record_text(event: GameEvent) -> str:
    """The event's record as stored text: written by the event itself when
    it can (``GameEvent.record_text``, optional), else encoded from
    ``for_record()``; the same text either way."""
    text_of = getattr(event, "record_text", None)
    return text_of() if text_of is not None else encode_record(event.for_record())


def _key(label: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(label.items())

