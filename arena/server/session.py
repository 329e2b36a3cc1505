"""One match as a pure state machine: no asyncio, no sockets, no clock.

:class:`MatchSession` is to a table what h11's ``Connection`` is to an HTTP
server: the driver (:class:`arena.server.table.Table`) feeds it what
happened -- ``answer``, ``deadline``, ``disconnect``, ``reconnect``, each
with the time ``now`` (seconds, any monotonic clock) -- and drains what it
must do as one typed :class:`SessionStep` (:meth:`MatchSession.step`):
one write per seat, records for storage, public events for spectators,
autopilot changes, when to call ``deadline`` next, whether house moves are
due (then :meth:`play_house`), and whether the match is over (the outcome
is :attr:`MatchSession.state`). Tests drain it as the table does. Everything about the game comes from
the engine's seat-addressed API (``arena.games.base``), so several seats
may owe a decision at once, each with its own request id, deadline and bank.

Rules kept here (protocol.md §5): a request's deadline is ``decision_ms``
plus what is left of the seat's bank, and time beyond ``decision_ms`` comes
out of the bank; at the deadline the engine's default is applied and every
seat gets a ``timeout`` event; a drop, or ``timeouts_before_autopilot``
timeouts in a row, puts the seat on autopilot (its house bot); a bot that
comes back with the same token gets its seat back whatever put it on
autopilot, and every seat is told (``autopilot`` with reason
``returned``); it gets ``match_start`` and the current deal's ``commit``
again, then its pending request. When every remote bot has left, the match waits (nothing is
played) for ``abandon_grace_s``; a bot back in time resumes it, otherwise it
is aborted. Nothing of a match reaches a seat before its ``match_start``
or after its ``match_end``.

A person's seat (``SeatKind.PERSON``, the play page) is asked, timed and
put on autopilot like a bot's, with its own ``Seat.limits`` when it has
them; a person who leaves is played by autopilot (a match never waits for
a person), and a person's table whose person never decided is aborted
(``PERSON_AWAY``): nobody is rated on autopilot's play.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Final

import structlog

from arena.games.base import CheckedAction, GameAction, GameEngine, IllegalActionError
from arena.metrics import Metrics
from arena.server.seats import AutopilotReason, PendingRequest, Seat, SeatKind
from arena.server.session_output import (
    FLUSH_AT_EVENTS,
    FLUSH_KINDS,
    SeatWrite,
    ServerEvent,
    SessionOutput,
    SessionStep,
)
from arena.records import encode_record
from protocol.codec import Encoding
from protocol.errors import ErrorCode
from protocol.messages import Limits as WireLimits
from protocol.messages import request_wire

log = structlog.get_logger("arena.table")

ABANDONED: Final = "every bot disconnected"
NOT_PLAYED: Final = "no seat was played by its bot"
PERSON_AWAY: Final = "the person at the table made no decision"



@dataclass(frozen=True)
class TimeLimits:
    """A match's clock: per decision, the bank a seat may overdraw from, and
    the timeouts in a row after which autopilot takes the seat."""

    decision_ms: int
    bank_ms: int
    timeouts_before_autopilot: int = 3

    def to_wire(self) -> dict[str, int]:
        return {"decision_ms": self.decision_ms, "bank_ms": self.bank_ms}


class SessionState(enum.Enum):
    CREATED = "created"  # seats known, nothing sent yet
    RUNNING = "running"
    WAITING = "waiting"  # every remote bot has left: nothing is played until one is back
    ENDED = "ended"  # the game is over; its result is not stored yet
    FINISHED = "finished"  # result stored, match_end sent
    ABORTED = "aborted"  # never counts


_TRANSITIONS: dict[SessionState, frozenset[SessionState]] = {
    SessionState.CREATED: frozenset({SessionState.RUNNING, SessionState.ABORTED}),
    SessionState.RUNNING: frozenset({SessionState.WAITING, SessionState.ENDED,
                                     SessionState.ABORTED}),
    SessionState.WAITING: frozenset({SessionState.RUNNING, SessionState.ABORTED}),
    SessionState.ENDED: frozenset({SessionState.FINISHED, SessionState.ABORTED}),
    SessionState.FINISHED: frozenset(),
    SessionState.ABORTED: frozenset(),
}


__all__ = ["FLUSH_AT_EVENTS", "FLUSH_KINDS", "TimeLimits", "MatchSession", "SeatWrite",
           "ServerEvent", "SessionState", "SessionStep"]


class MatchSession:
    """The rules of one match's time, faults and messages, without I/O.

    ``encodings[i]`` is the encoding of seat i's connection, or None while
    it has none (a house seat, or a bot that left). Every input method takes
    ``now``; what it sends accumulates in its :attr:`output` (a
    :class:`~arena.server.session_output.SessionOutput`) until the driver
    drains it with :meth:`step`.
    """

    def __init__(self, *, match_id: str, game: str, engine: GameEngine, seats: list[Seat],
                 limits: TimeLimits, encodings: list[Encoding | None],
                 abandon_grace_s: float = 5.0, metrics: Metrics | None = None,
                 sealed: bool = False) -> None:
        self.match_id = match_id
        self.game = game
        self.engine = engine
        self.seats = seats
        self.limits = limits
        self.abandon_grace_s = abandon_grace_s
        self.metrics = metrics
        self.state = SessionState.CREATED
        self.over = False
        self.result: dict[str, Any] | None = None
        self.reveal: list[dict[str, Any]] | None = None
        self.abort_reason: str | None = None
        self.output = SessionOutput(match_id, game, encodings, metrics, sealed)
        self._pending: dict[int, PendingRequest] = {}
        self._house_due: list[int] = []
        self._next_id = 1
        self._abandon_at: float | None = None
        self._waiting_since = 0.0
        self.log = log.bind(match=match_id)
        for seat in seats:
            seat.bank_ms = float((seat.limits or limits).bank_ms)

    @property
    def players(self) -> list[str]:
        return [seat.name for seat in self.seats]

    @property
    def sealed(self) -> bool:
        """Whether a later match deals these decks again (protocol §6): its
        sending is the output's (``SessionOutput.sealed``)."""
        return self.output.sealed

    @sealed.setter
    def sealed(self, value: bool) -> None:
        self.output.sealed = value

    # -- state --------------------------------------------------------------
    def _to(self, state: SessionState) -> None:
        assert state in _TRANSITIONS[self.state], f"session {self.state.name} -> {state.name}"
        self.state = state
        # The driver has nothing more to feed in (a plain attribute: read every step).
        self.over = state in (SessionState.ENDED, SessionState.FINISHED, SessionState.ABORTED)

    def step(self) -> SessionStep:
        """What the inputs since the last call ask of the driver (see
        :class:`SessionStep`); the session starts the next step empty."""
        return self.output.take(self.next_deadline(), self.house_due, self.over)

    def next_deadline(self) -> float | None:
        """When ``deadline`` has something to do next, or None."""
        if self.state is SessionState.WAITING:
            return self._abandon_at
        pending = self._pending
        if not pending:
            return None
        if len(pending) == 1:
            for request in pending.values():
                return request.deadline_at
        return min(request.deadline_at for request in pending.values())

    @property
    def house_due(self) -> bool:
        """House or autopilot moves wait for :meth:`play_house` (the driver
        runs them on the loop's next turn, so other tables run between)."""
        return bool(self._house_due) and self.state is SessionState.RUNNING

    # -- inputs -----------------------------------------------------------------
    def start(self, now: float) -> None:
        """Send ``match_start`` to every connected seat and play up to the
        first decisions. Seats that left before the start are announced now,
        after ``match_start``."""
        self._to(SessionState.RUNNING)
        for seat in self.seats:
            self._send_match_start(seat.index)
        early = [ServerEvent("autopilot", seat=s.index, reason=s.autopilot.value)
                 for s in self.seats if s.autopilot is not None]
        if early:
            self.output.emit(early)
        self.output.emit(self.engine.start())
        if self._no_bot_left():
            self._wait(now)
        self._advance(now)

    def answer(self, seat_index: int, request_id: int, action: GameAction, now: float) -> None:
        """A bot's answer to request ``request_id``."""
        seat = self.seats[seat_index]
        pending = self._pending.get(seat_index)
        if pending is None or pending.id != request_id or self.state is not SessionState.RUNNING:
            if request_id in seat.issued:
                self.output.send_error(
                    seat_index, ErrorCode.LATE,
                    f"request {request_id} is already settled; answer ignored", request_id)
            else:
                self.output.send_error(
                    seat_index, ErrorCode.UNKNOWN_REQUEST,
                    f"request {request_id} was never sent to seat {seat_index}", request_id)
            return
        try:
            checked = self.engine.check_for(seat_index, action)
        except IllegalActionError as exc:
            seat.illegal += 1
            if self.metrics is not None:
                self.metrics.illegal()
            self.output.send_error(seat_index, ErrorCode.ILLEGAL_ACTION,
                                   f"{exc}; answer again before the deadline", request_id)
            return
        elapsed_ms = (now - pending.sent_at) * 1000.0
        seat.latencies.append(round(elapsed_ms, 3))
        over = elapsed_ms - (seat.limits or self.limits).decision_ms
        if over > 0:
            seat.bank_ms = max(0.0, seat.bank_ms - over)
        seat.consecutive_timeouts = 0
        del self._pending[seat_index]
        self._decide(seat_index, pending.phase, checked.action, "bot", now, checked)

    def deadline(self, now: float) -> None:
        """Apply whatever is due at ``now``: defaults of requests past their
        deadline, or the abort of a match nobody came back to."""
        if self.state is SessionState.WAITING:
            if self._abandon_at is not None and now >= self._abandon_at:
                self.abort(ABANDONED)
            return
        if self.state is not SessionState.RUNNING:
            return
        due = sorted((p for p in self._pending.values() if p.deadline_at <= now),
                     key=lambda p: (p.deadline_at, p.seat))
        for pending in due:
            if self.state is not SessionState.RUNNING or self._pending.get(pending.seat) is not pending:
                continue
            self._timeout(pending, now)

    def disconnect(self, seat_index: int, now: float) -> None:
        """Seat ``seat_index``'s bot is gone: autopilot, or wait for a bot
        to come back when none is left."""
        seat = self.seats[seat_index]
        if self.output.encodings[seat_index] is None or self.over:
            return
        self.output.seat_left(seat_index)  # its buffer is dropped; a return starts afresh
        seat.disconnects += 1
        self.log.info("seat_disconnected", seat=seat_index, bot=seat.name)
        if self.state is SessionState.CREATED:
            if seat.autopilot is None:
                seat.autopilot = AutopilotReason.DISCONNECTED  # announced at start
                self.output.autopilot_changed(seat_index, seat.autopilot)
            return
        if self._no_bot_left():
            if seat.autopilot is None:
                seat.autopilot = AutopilotReason.DISCONNECTED
                self.output.autopilot_changed(seat_index, seat.autopilot)
                self.output.emit([ServerEvent("autopilot", seat=seat_index,
                                              reason=seat.autopilot.value)])
            if self.state is SessionState.RUNNING:
                self._wait(now)
            return
        if seat.autopilot is None:
            self._start_autopilot(seat_index, AutopilotReason.DISCONNECTED, now)

    def reconnect(self, seat_index: int, encoding: Encoding, now: float) -> bool:
        """A bot with this seat's token is back: it gets its seat back,
        whatever put the seat on autopilot. False once the match is over."""
        if self.over:
            return False
        seat = self.seats[seat_index]
        assert seat.kind is not SeatKind.HOUSE
        self.output.seat_back(seat_index, encoding)
        was = seat.autopilot
        seat.autopilot = None
        if was is not None:
            self.output.autopilot_changed(seat_index, None)
        seat.consecutive_timeouts = 0
        self.log.info("seat_reattached", seat=seat_index, bot=seat.name)
        if self.state is SessionState.CREATED:
            return True  # match_start comes with the start
        self._send_match_start(seat_index)
        self.output.resend_commit(seat_index)
        if was is not None:
            self.output.emit([ServerEvent("autopilot", seat=seat_index, reason="returned")])
        waiting = self.state is SessionState.WAITING
        if waiting:
            self._unpause(now)
        pending = self._pending.get(seat_index)
        if pending is not None:  # only the time that is left
            remaining_ms = max(0, int((pending.deadline_at - now) * 1000))
            self.output.send_request(seat_index, {**pending.wire, "deadline_ms": remaining_ms})
        if waiting:
            self._to(SessionState.RUNNING)
            self._abandon_at = None
            self._advance(now)
        self._settle_unattended(now)
        return True

    def play_house(self, now: float) -> None:
        """Play the house and autopilot moves that were due before this call
        (moves they lead to wait for the next call)."""
        if self.state is not SessionState.RUNNING:
            return
        due, self._house_due = self._house_due, []
        engine = self.engine
        for seat_index in due:
            if self.state is not SessionState.RUNNING:
                return
            if seat_index not in engine.to_act or seat_index in self._pending:
                continue
            if self._asks_remote(seat_index):  # its bot came back meanwhile
                self._ask(seat_index, now)
                continue
            seat = self.seats[seat_index]
            phase = engine.phase_for(seat_index)
            options = engine.request_for(seat_index)
            action = seat.house(phase, _house_options(options), engine.observation(seat_index))
            self._decide(seat_index, phase, action,
                         "house" if seat.kind is SeatKind.HOUSE else "autopilot", now)

    def finish(self) -> None:
        """The result is stored: send ``match_end`` to every connected seat."""
        self._to(SessionState.FINISHED)
        self.output.send_match_end(self.result, self.reveal)

    def abort(self, reason: str) -> None:
        """End the match as aborted (it never counts); what seats were
        already due to see goes out, no ``match_end``."""
        if self.state is SessionState.ABORTED or self.state is SessionState.FINISHED:
            return
        self._to(SessionState.ABORTED)
        self.abort_reason = reason
        self._pending.clear()
        self._house_due.clear()
        self.output.flush_all()

    # -- the match ----------------------------------------------------------------
    def _advance(self, now: float) -> None:
        """Ask every seat that owes a decision and is not asked yet, or end."""
        if self.state is not SessionState.RUNNING and self.state is not SessionState.WAITING:
            return
        engine = self.engine
        if engine.finished:
            self._end()
            return
        to_act = engine.to_act
        pending = self._pending
        if pending:
            for stale in [s for s in pending if s not in to_act]:
                del pending[stale]  # no longer owed (cannot happen in a sequential game)
        seats, encodings = self.seats, self.output.encodings
        for seat_index in to_act:
            if seat_index in pending or seat_index in self._house_due:
                continue
            seat = seats[seat_index]  # _asks_remote, inlined: once per decision
            if (seat.kind is not SeatKind.HOUSE and seat.autopilot is None
                    and encodings[seat_index] is not None):
                self._ask(seat_index, now)
            else:
                self._house_due.append(seat_index)

    def _decide(self, seat_index: int, phase: str, action: GameAction, source: str,
                now: float, checked: CheckedAction[Any] | None = None) -> None:
        if source == "default" or source == "autopilot":
            # The engine's own records carry every action; this one says
            # who chose it when it was not the seat's bot or house bot.
            self.output.record(encode_record({"kind": "action", "seat": seat_index,
                                              "phase": phase, "action": action,
                                              "source": source}))
        if self.metrics is not None:
            # An attribute, not a call: the server's sampler buckets it by second.
            self.metrics.decisions_total += 1
        engine = self.engine
        if checked is None:  # a house, autopilot or default move: checked here
            checked = engine.check_for(seat_index, action)
        self.output.emit(engine.apply(checked))
        self._advance(now)

    def _ask(self, seat_index: int, now: float) -> None:
        engine = self.engine
        seat = self.seats[seat_index]
        request_id = self._next_id
        self._next_id += 1
        phase = engine.phase_for(seat_index)
        deadline_ms = (seat.limits or self.limits).decision_ms + int(seat.bank_ms)
        options = engine.request_for(seat_index)
        wire = request_wire(self.match_id, request_id, phase, deadline_ms, options,
                            engine.observation(seat_index))
        deadline_s = deadline_ms / 1000.0
        legal = options.get("legal")
        self._pending[seat_index] = PendingRequest(
            id=request_id, seat=seat_index, phase=phase,
            legal=legal if legal is not None else _house_options(options),
            wire=wire, sent_at=now, deadline_s=deadline_s, deadline_at=now + deadline_s)
        seat.issued.add(request_id)
        self.output.send_request(seat_index, wire)

    def _timeout(self, pending: PendingRequest, now: float) -> None:
        seat = self.seats[pending.seat]
        seat.timeouts += 1
        seat.consecutive_timeouts += 1
        seat.bank_ms = 0.0
        if self.metrics is not None:
            self.metrics.timeout()
        self.log.info("decision_timeout", seat=seat.index, bot=seat.name, phase=pending.phase)
        del self._pending[pending.seat]
        self.output.emit([ServerEvent("timeout", seat=seat.index, phase=pending.phase)])
        if seat.consecutive_timeouts >= (seat.limits or self.limits).timeouts_before_autopilot:
            self._start_autopilot(seat.index, AutopilotReason.TIMEOUTS, now)
        self._decide(seat.index, pending.phase, self.engine.default_for(seat.index), "default", now)

    def _start_autopilot(self, seat_index: int, reason: AutopilotReason, now: float) -> None:
        seat = self.seats[seat_index]
        seat.autopilot = reason
        self.output.autopilot_changed(seat_index, reason)
        self.log.info("autopilot", seat=seat_index, bot=seat.name, reason=reason.value)
        self.output.emit([ServerEvent("autopilot", seat=seat_index, reason=reason.value)])
        self._settle_unattended(now)

    def _settle_unattended(self, now: float) -> None:
        """Open requests of seats nobody answers for: the house bot answers."""
        if self.state is not SessionState.RUNNING:
            return
        for seat_index, pending in list(self._pending.items()):
            if self._asks_remote(seat_index) or self._pending.get(seat_index) is not pending:
                continue
            seat = self.seats[seat_index]
            del self._pending[seat_index]
            action = seat.house(pending.phase, pending.legal, self.engine.observation(seat_index))
            self._decide(seat_index, pending.phase, action, "autopilot", now)
            if self.state is not SessionState.RUNNING:
                return

    def _wait(self, now: float) -> None:
        self._to(SessionState.WAITING)
        self._waiting_since = now
        self._abandon_at = now + self.abandon_grace_s
        self.log.info("match_waiting", grace_s=self.abandon_grace_s)

    def _unpause(self, now: float) -> None:
        """A bot is back: open requests keep the time they had left when
        the match began to wait (the wait is nobody's decision time)."""
        paused = now - self._waiting_since
        for pending in self._pending.values():
            pending.sent_at += paused
            pending.deadline_at += paused

    def _end(self) -> None:
        if all(s.kind is not SeatKind.REMOTE or not s.latencies_ms for s in self.seats) and \
                any(s.kind is SeatKind.REMOTE for s in self.seats):
            self.abort(NOT_PLAYED)
            return
        if any(s.kind is SeatKind.PERSON and not s.latencies for s in self.seats):
            # A person's table is played for the person: one who never
            # decided (away the whole match) is not rated on autopilot's play.
            self.abort(PERSON_AWAY)
            return
        self._to(SessionState.ENDED)
        self.result = self.engine.result()
        self.reveal = self.output.reveal(self.engine.deals())
        self._pending.clear()
        self.output.flush_all()

    def _send_match_start(self, seat_index: int) -> None:
        own = self.seats[seat_index].limits or self.limits
        self.output.send_match_start(seat_index, tuple(self.players), self.engine.rules,
                                     WireLimits(own.decision_ms, own.bank_ms))

    def _asks_remote(self, seat_index: int) -> bool:
        seat = self.seats[seat_index]
        return (seat.kind is not SeatKind.HOUSE and seat.autopilot is None
                and self.output.encodings[seat_index] is not None)

    def _no_bot_left(self) -> bool:
        remote = [i for i, s in enumerate(self.seats) if s.kind is SeatKind.REMOTE]
        # A person still at the table keeps it playing (bots gone to autopilot).
        return bool(remote) and all(self.output.encodings[i] is None for i in remote) and not any(
            s.kind is SeatKind.PERSON and self.output.encodings[s.index] is not None
            for s in self.seats)

def _house_options(options: dict[str, Any]) -> Any:
    """A house bot's second argument: the ``legal`` list, else the constraints."""
    legal = options.get("legal")
    return legal if legal is not None or "legal" in options else options.get("constraints")
