"""A table runs one match: the asyncio driver of a :class:`MatchSession`.

The rules of the match (requests, deadlines, the bank, autopilot, returns,
what each seat sees) live in the sans-IO session (``arena.server.session``);
the table only moves things between it and the world: bot answers and
drops in, bytes out to the connections, records to the store writer,
public events to the live hub, one loop timer at the session's next
deadline, and house moves on the loop's next turn. While the store
writer's backlog is at its bound the table holds its inputs with its clock
stopped (``arena.server.pause``): a stalled disk pauses the match instead
of filling memory, and costs no bot any of its time.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from typing import TYPE_CHECKING, Any, Callable

import structlog

from arena.games.base import GameAction, GameEngine, GameSpec
from arena.live import MATCH_CANCELLED
from arena.server.pause import HeldInput, HeldKind, TablePause
from arena.server.retry import LogThrottle
from arena.server.seats import AutopilotReason, Seat, SeatKind
from arena.server.session import (
    FLUSH_AT_EVENTS,
    FLUSH_KINDS,
    TimeLimits,
    MatchSession,
    ServerEvent,
    SessionState,
    SessionStep,
)
from arena.storage.base import MatchRecord, MatchStatus, StorageError
from protocol.errors import ErrorCode

if TYPE_CHECKING:
    from arena.metrics import Metrics
    from arena.server.connection import BotConnection
    from arena.storage.writer import StoreWriter
    from arena.live import LiveHub

__all__ = ["FLUSH_AT_EVENTS", "FLUSH_KINDS", "TimeLimits", "ServerEvent", "Table"]

log = structlog.get_logger("arena.table")

# After the store failed to create a match, its bots wait this long before
# they go back to the lobby: matchmaking would otherwise start the next
# doomed table at once, again and again, while the disk is full.
STORE_RETRY_S = 1.0

_STORE_FAILURES = (OSError, sqlite3.Error, StorageError)
_NOT_CREATED_LOG = LogThrottle(every_s=60.0)  # all tables of the process together


class Table:
    """Plays one match between connections, a store writer and a live hub.

    ``run()`` creates the match row, starts the session and awaits its end;
    every other entry point (``answer``, ``seat_disconnected``,
    ``reattach``) is a plain call from the connection layer that feeds the
    session and then moves its output (``_pump``). A bot's answer is
    applied inside ``answer`` and the next request goes out in the same
    call: a decision costs no future, task wake-up or timer of its own.
    """

    def __init__(self, *, match_id: str, spec: GameSpec, engine: GameEngine, seats: list[Seat],
                 limits: TimeLimits, writer: "StoreWriter", hub: "LiveHub | None" = None,
                 metrics: "Metrics | None" = None, tournament_id: str | None = None,
                 seed: str | None = None,
                 on_seat_released: Callable[["BotConnection"], None] | None = None,
                 abandon_grace_s: float = 5.0, slot: tuple[str, int] | None = None,
                 house_pace_s: float = 0.0) -> None:
        self.match_id = match_id
        self.spec = spec
        self.engine = engine
        self.seats = seats
        self.limits = limits
        self.writer = writer
        self.hub = hub
        self.metrics = metrics
        self.tournament_id = tournament_id
        self.seed = seed
        self.slot = slot  # (tournament id, slot index), completed by finish_match
        # Seconds between house moves: 0 for bots; a person's table paces
        # them so the person sees each card played.
        self.house_pace_s = house_pace_s
        self._on_seat_released = on_seat_released
        self.session = MatchSession(
            match_id=match_id, game=spec.name, engine=engine, seats=seats, limits=limits,
            encodings=[seat.conn.encoding if seat.conn is not None and not seat.conn.closed
                       else None for seat in seats],
            abandon_grace_s=abandon_grace_s, metrics=metrics)
        self._seq = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._done: "asyncio.Future[None] | None" = None
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = 0.0  # when self._timer fires
        self._house_scheduled = False
        self._pumping = False
        self._pump_again = False
        self._pause = TablePause()
        self.finished = asyncio.Event()
        self._created = False  # the match is in the store (so an early end aborts it)
        self.result: dict[str, Any] | None = None
        self.aborted: str | None = None
        self.cancel_reason: str | None = None  # why a cancel ends it (see mark_cancelled)
        self.log = log.bind(match=match_id)
        for seat in seats:
            if seat.conn is not None:
                seat.conn.seated = self

    # -- public -------------------------------------------------------------
    @property
    def players(self) -> list[str]:
        return [seat.name for seat in self.seats]

    @property
    def paused(self) -> bool:
        """Waiting for the store writer to have room (the clock stands still)."""
        return self._pause.since is not None

    def mark_cancelled(self, reason: str) -> None:
        """Say why the cancel about to come ends this match; the first reason
        given holds (a shutdown that follows a tournament's cancel does not
        rewrite it)."""
        if self.cancel_reason is None:
            self.cancel_reason = reason

    async def run(self) -> dict[str, Any] | None:
        """Play the match to its end; return the result (protocol §6), or
        None if it was aborted (abandoned, not played, or not storable)."""
        self._loop = asyncio.get_running_loop()
        # What ends the match early (a cancel, a crash) is caught here and
        # dealt with below, outside the handler: the abort and the seats
        # given back (which may seat the bots at a new table at once) must
        # not run while this exception is being handled, or every
        # exception they raise would carry it, and with it this table's
        # frames, as its __context__.
        ended_by: BaseException | None = None
        result: dict[str, Any] | None = None
        try:
            result = await self._play()
        except (asyncio.CancelledError, Exception) as exc:
            ended_by = exc
        try:
            if isinstance(ended_by, asyncio.CancelledError):
                if self._created:  # (a match not stored yet has nothing to abort)
                    await self._abort(self.cancel_reason or MATCH_CANCELLED)
            elif ended_by is not None:
                self.log.error("match_crashed", exc_info=ended_by)
                if self._created:
                    await self._abort(f"internal error: {type(ended_by).__name__}: {ended_by}")
        finally:
            self._release_seats()
            self.finished.set()
        if ended_by is not None:
            try:
                raise ended_by
            finally:
                ended_by = None  # this frame would otherwise keep its own exception
        return result

    async def _play(self) -> dict[str, Any] | None:
        started = time.time()
        not_created: str | None = None
        try:
            await self.writer.create_match(MatchRecord(
                id=self.match_id, game=self.spec.name, players=self.players,
                rules=self.engine.rules, limits=self.limits.to_wire(),
                status=MatchStatus.RUNNING, started_at=started,
                tournament_id=self.tournament_id, seed=self.seed))
        except _STORE_FAILURES as exc:
            not_created = f"{type(exc).__name__}: {exc}"  # the wait runs outside the handler
        if not_created is not None:
            await self._not_created(not_created)
            return None
        self._created = True
        _NOT_CREATED_LOG.reset()
        if self.metrics is not None:
            self.metrics.tables_running += 1
        if self.hub is not None:
            self.hub.match_started(self.match_id, {
                "game": self.spec.name, "players": self.players,
                "tournament_id": self.tournament_id, "started_at": started})
        self.log.info("match_started", players=self.players)
        try:
            self._done = asyncio.get_running_loop().create_future()
            try:
                self._feed(HeldInput(HeldKind.START))
                await self._done
            finally:
                self._stop_timer()
            if self.session.state is SessionState.ABORTED:
                await self._abort(self.session.abort_reason or "aborted")
                return None
            return await self._finish()
        finally:
            if self.metrics is not None:
                self.metrics.tables_running -= 1

    def answer(self, conn: "BotConnection", match: str, request_id: int, action: GameAction) -> None:
        """A bot's ``action`` message for this table."""
        seat = self._seat_of(conn)
        if seat is None:
            conn.send_error(ErrorCode.UNKNOWN_REQUEST,
                            f"this connection holds no seat in match {match!r}", request_id,
                            match=match)
            return
        if self._pause.since is not None or self.writer.full:
            if not self._hold(HeldInput(HeldKind.ANSWER, seat.index, request_id, action)):
                conn.send_error(ErrorCode.RATE_LIMITED,
                                "the match is paused while the store catches up and holds "
                                "enough answers of this seat; answer ignored", request_id,
                                match=match)
            return
        # _step by hand: this runs once per decision.
        try:
            self.session.answer(seat.index, request_id, action, self._now())
            self._pump()
        except Exception as exc:
            self._failed(exc)

    def seat_disconnected(self, conn: "BotConnection") -> None:
        seat = self._seat_of(conn)
        if seat is None or self.finished.is_set():
            return
        seat.conn = None
        self._feed(HeldInput(HeldKind.DISCONNECT, seat.index))

    def reattach(self, conn: "BotConnection") -> bool:
        """Give a reconnecting bot its seat back (same token), whether the
        seat was left or put on autopilot for timeouts."""
        if self.finished.is_set() or conn.identity is None or self.session.over:
            return False
        # A person's link takes back a person's seat, a bot's connection a bot's.
        kind = SeatKind.PERSON if getattr(conn, "person", False) else SeatKind.REMOTE
        for seat in self.seats:
            old = seat.conn
            if (seat.kind is kind and seat.token_hash == conn.identity.token_hash
                    and (old is None or old.closed or seat.autopilot is AutopilotReason.TIMEOUTS)
                    and old is not conn):
                if old is not None and old.seated is self:
                    old.seated = None
                    if (not old.closed and kind is SeatKind.REMOTE
                            and self._on_seat_released is not None):
                        self._on_seat_released(old)
                seat.conn = conn
                conn.seated = self
                self._feed(HeldInput(HeldKind.RECONNECT, seat.index, encoding=conn.encoding))
                return True
        return False

    # -- driving the session ---------------------------------------------------
    def _loop_time(self) -> float:
        loop = self._loop
        if loop is None:
            loop = self._loop = asyncio.get_running_loop()
        return loop.time()

    def _now(self) -> float:
        """The session's clock: the loop's, stopped while the table is paused."""
        pause = self._pause
        since = pause.since
        return (self._loop_time() if since is None else since) - pause.paused_s

    # -- pausing for the store writer --------------------------------------------
    def _feed(self, held: HeldInput) -> None:
        """Apply an input now, or hold it while the writer is full."""
        if self._pause.since is not None or self.writer.full:
            self._hold(held)
        else:
            self._apply(held)

    def _apply(self, held: HeldInput) -> None:
        session, kind = self.session, held.kind
        if kind is HeldKind.ANSWER:
            self._step(session.answer, held.seat, held.request_id, held.action)
        elif kind is HeldKind.DISCONNECT:
            self._step(session.disconnect, held.seat)
        elif kind is HeldKind.RECONNECT:
            self._step(session.reconnect, held.seat, held.encoding)
        else:
            self._step(session.start)

    def _hold(self, held: HeldInput | None) -> bool:
        """Pause (if not yet) and keep ``held`` for the end of the pause;
        False when it was not kept (an answer over its seat's bound)."""
        pause = self._pause
        if pause.since is None:
            pause.begin(self._loop_time())
            self._stop_timer()  # the clock stands still: nothing falls due
            self.writer.when_room(self._resume)
            self.log.info("match_paused", reason="store backlog full",
                          backlog=self.writer.backlog)
        return held is None or pause.hold(held)

    def _resume(self) -> None:
        """The writer has room: the clock runs on from the paused instant
        and the held inputs are applied in order, as far as room lasts."""
        pause = self._pause
        if pause.since is None:
            return
        if self.writer.full:  # another table took the room first
            self.writer.when_room(self._resume)
            return
        pause.end(self._loop_time())
        if self.session.over or self.finished.is_set():
            return
        while (held := pause.next_held()) is not None:
            self._apply(held)
            if self.writer.full and len(pause):
                self._hold(None)
                return
        self._pump()  # the timer and house moves, if no held input re-armed them

    def _step(self, fn: Callable[..., object], *args: Any) -> None:
        """Feed the session one input, then move its output; an error ends
        the match (``run`` sees it)."""
        try:
            fn(*args, self._now())
            self._pump()
        except Exception as exc:
            self._failed(exc)

    def _failed(self, exc: Exception) -> None:
        done = self._done
        if done is not None and not done.done():
            done.set_exception(exc)
        elif done is None:
            raise exc

    def _pump(self) -> None:
        """Execute the session's step: bytes to connections, records to the
        writer, public events to the hub; mark seats put on autopilot for
        timeouts, arm the timer and house moves."""
        if self._pumping:
            self._pump_again = True  # a send dropped a connection: its step comes next
            return
        self._pumping = True
        try:
            while True:
                self._pump_again = False
                self._execute(self.session.step())
                if not self._pump_again:
                    break
        finally:
            self._pumping = False

    def _execute(self, step: SessionStep) -> None:
        seats = self.seats
        for write in step.writes:
            conn = seats[write.seat].conn
            if conn is not None and not conn.closed:
                conn.send_bytes(write.data, write.holds_request)
        records = step.records
        if records:
            # One clock read per step, not per record.
            self.writer.append_encoded_nowait(self.match_id, self._seq, time.time(), records)
            self._seq += len(records)
        if step.public and self.hub is not None:
            self.hub.match_events(self.match_id, step.public)
        for seat_index, reason in step.autopilot:
            conn = seats[seat_index].conn
            if reason is AutopilotReason.TIMEOUTS and conn is not None:
                # Its connection is not seated again until it shows it is alive.
                conn.awaiting_life = True
        if step.house_due and not self._house_scheduled:
            # On the loop's next turn: other tables and connections run
            # between house moves.
            self._house_scheduled = True
            if self.house_pace_s > 0:
                self._loop.call_later(self.house_pace_s, self._house_turn)  # type: ignore[union-attr]
            else:
                self._loop.call_soon(self._house_turn)  # type: ignore[union-attr]
        if step.next_deadline is not None:
            self._arm_timer(step.next_deadline)
        if step.over:
            done = self._done
            if done is not None and not done.done():
                done.set_result(None)

    def _house_turn(self) -> None:
        self._house_scheduled = False
        if self._pause.since is not None or self.writer.full:
            self._hold(None)  # the session keeps the moves due; the resume schedules them
            return
        self._step(self.session.play_house)

    # One deadline timer per table, reused: requests follow each other much
    # faster than deadlines pass, so instead of a timer per request the timer
    # stays armed and, when it fires early (armed for an earlier request),
    # the session finds nothing due and the timer moves on.
    def _arm_timer(self, at: float) -> None:
        timer = self._timer
        if timer is not None:
            if self._timer_at <= at:
                return  # fires first; _on_timer moves it on
            timer.cancel()
        # ``at`` is the session's time; the loop's runs ahead by the pauses.
        self._timer = self._loop.call_at(at + self._pause.paused_s,  # type: ignore[union-attr]
                                         self._on_timer)
        self._timer_at = at

    def _on_timer(self) -> None:
        timer, self._timer = self._timer, None
        if timer is None:
            return
        if self._pause.since is not None or self.writer.full:
            self._hold(None)  # nothing falls due while paused; the resume re-arms
            return
        # The loop runs a timer up to its clock resolution early: it is due.
        when = timer.when() - self._pause.paused_s
        try:
            self.session.deadline(max(self._now(), when))
            self._pump()
        except Exception as exc:
            self._failed(exc)

    def _stop_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    # -- storage and the end ---------------------------------------------------
    async def _finish(self) -> dict[str, Any]:
        session = self.session
        result = session.result
        assert result is not None and session.reveal is not None
        self._pump()
        await self.writer.finish_match(
            self.match_id, result=result, reveal=session.reveal,
            faults=[seat.faults() for seat in self.seats],
            latency_ms=[seat.latencies_ms for seat in self.seats], finished_at=time.time(),
            slot=self.slot)
        self.result = result
        session.finish()
        self._pump()
        if self.metrics is not None:
            self.metrics.match_finished()
        if self.hub is not None:
            self.hub.match_ended(self.match_id, {"result": result, "players": self.players})
            self.hub.standings_changed(self.tournament_id or "ladder")
        self.log.info("match_finished", stars=result.get("stars"), ranks=result.get("ranks"))
        return result

    async def _abort(self, reason: str) -> None:
        self.aborted = reason
        self.session.abort(reason)
        self._pump()
        try:
            await asyncio.shield(self.writer.abort_match(
                self.match_id, reason, faults=[seat.faults() for seat in self.seats]))
        except Exception:  # storage is closing too; the restart marks it aborted
            self.log.exception("abort_not_stored")
        if self.metrics is not None:
            self.metrics.match_aborted()
        if self.hub is not None:
            self.hub.match_ended(self.match_id, {"aborted": reason, "players": self.players})
        self.log.warning("match_aborted", reason=reason)

    async def _not_created(self, cause: str) -> None:
        """The store could not create the match (``cause``): nothing was
        sent, nothing counts; the bots go back to the lobby after a pause
        (the writer logs the failure once, when the store starts failing)."""
        self.aborted = f"the store could not create the match: {cause.split(': ', 1)[-1]}"
        held_back = _NOT_CREATED_LOG.allow(time.monotonic())
        if held_back is not None:  # a full disk fails every table: once a minute is enough
            self.log.warning("match_not_created", cause=cause, not_logged=held_back)
        self.session.abort(self.aborted)
        if STORE_RETRY_S > 0:
            await asyncio.sleep(STORE_RETRY_S)

    def _release_seats(self) -> None:
        for seat in self.seats:
            conn = seat.conn
            if conn is not None and conn.seated is self:
                conn.seated = None
                # (a person goes back to the play page, not to the lobby)
                if (not conn.closed and seat.kind is SeatKind.REMOTE
                        and self._on_seat_released is not None):
                    self._on_seat_released(conn)

    def _seat_of(self, conn: "BotConnection") -> Seat | None:
        for seat in self.seats:
            if seat.conn is conn:
                return seat
        return None
