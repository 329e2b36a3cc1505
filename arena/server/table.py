"""A table runs one match: it asks seats for decisions and forwards events.

Game-neutral: everything about the game comes from the engine
(``arena.games.base.GameEngine``). Data flows one way: bot answers arrive via
:meth:`Table.answer`, the engine turns actions into events, and the table
sends each event to the seats that may see it, to storage (its full record)
and to the live hub (its public form).

Time: each request's deadline is ``decision_ms`` plus what is left of the
seat's bank; time beyond ``decision_ms`` is taken from the bank. At the
deadline the engine's default action is applied and every seat gets a
``timeout`` event. Disconnects and repeated timeouts put the seat on
autopilot (its house bot) for the rest of the match; a bot that reconnects
with the same token gets the seat back.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

import structlog

from arena.games.base import Action, GameEngine, GameEvent, GameSpec, IllegalActionError
from arena.server.seats import AutopilotReason, PendingRequest, Seat, SeatKind
from arena.storage.base import MatchRecord, MatchStatus
from arena.storage.writer import encode_record
from protocol.codec import Encoding, Envelope, encode
from protocol.deals import commitment, new_salt
from protocol.errors import ErrorCode

if TYPE_CHECKING:
    from arena.metrics import Metrics
    from arena.server.connection import BotConnection
    from arena.storage.writer import StoreWriter
    from arena.web.live import LiveHub

log = structlog.get_logger("arena.table")

# Events for a seat wait in its buffer and go out in one write: with its
# next request, at the end of every hand, at a timeout or autopilot, or once
# this many are waiting. A bot needs them before it acts, not sooner; one
# write per seat per hand instead of one per event keeps many tables cheap.
FLUSH_AT_EVENTS = 32
FLUSH_KINDS = frozenset({"hand_end", "round_end", "timeout", "autopilot"})


class MatchAbandonedError(Exception):
    """Every remote bot left: nobody is left to play for, so the match is
    aborted (it never counts) instead of being finished by autopilots."""


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


@dataclass(frozen=True)
class Limits:
    decision_ms: int
    bank_ms: int
    timeouts_before_autopilot: int = 3

    def to_wire(self) -> dict[str, int]:
        return {"decision_ms": self.decision_ms, "bank_ms": self.bank_ms}


class Table:
    def __init__(self, *, match_id: str, spec: GameSpec, engine: GameEngine, seats: list[Seat],
                 limits: Limits, writer: "StoreWriter", hub: "LiveHub | None" = None,
                 metrics: "Metrics | None" = None, tournament_id: str | None = None,
                 seed: str | None = None, slot: tuple[str, int] | None = None,
                 on_seat_released: Callable[["BotConnection"], None] | None = None) -> None:
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
        self._on_seat_released = on_seat_released
        self._seq = 0
        self._records: list[str] = []  # the next seqs' events as JSON, not yet persisted
        self._next_id = 1
        self._pending: PendingRequest | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._done: "asyncio.Future[None] | None" = None
        self._timer: asyncio.TimerHandle | None = None
        self._salts: dict[tuple[int, int], str] = {}
        self._out: list[list[bytes]] = [[] for _ in seats]
        self._envelope = Envelope({"type": "event", "match": match_id}, "event")
        self.finished = asyncio.Event()
        self.result: dict[str, Any] | None = None
        self.aborted: str | None = None
        self._abandoned = False
        self.log = log.bind(match=match_id)
        for seat in seats:
            seat.bank_ms = float(limits.bank_ms)
            if seat.conn is not None:
                seat.conn.seated = self

    # -- public -------------------------------------------------------------
    @property
    def players(self) -> list[str]:
        return [seat.name for seat in self.seats]

    async def run(self) -> dict[str, Any] | None:
        """Play the match to its end; return the result (protocol §6), or
        None if it was abandoned by every bot."""
        started = time.time()
        await self.writer.create_match(MatchRecord(
            id=self.match_id, game=self.spec.name, players=self.players, rules=self.engine.rules,
            limits=self.limits.to_wire(), status=MatchStatus.RUNNING, started_at=started,
            tournament_id=self.tournament_id, seed=self.seed))
        if self.metrics is not None:
            self.metrics.tables_running += 1
        if self.hub is not None:
            self.hub.match_started(self.match_id, {
                "game": self.spec.name, "players": self.players,
                "tournament_id": self.tournament_id, "started_at": started})
        self.log.info("match_started", players=self.players)
        try:
            for seat in self.seats:
                self._send_match_start(seat)
            self._loop = loop = asyncio.get_running_loop()
            self._done = loop.create_future()
            try:
                self._emit(self.engine.start())
                self._advance()
                await self._done  # the match is played by callbacks (see "the match loop")
            finally:
                self._stop_asking()
            return await self._finish()
        except MatchAbandonedError:
            await self._abort("every bot disconnected")
            return None
        except asyncio.CancelledError:
            await self._abort("server shutting down")
            raise
        except Exception as exc:
            self.log.exception("match_crashed")
            await self._abort(f"internal error: {type(exc).__name__}: {exc}")
            raise
        finally:
            if self.metrics is not None:
                self.metrics.tables_running -= 1
            self._release_seats()
            self.finished.set()

    def answer(self, conn: "BotConnection", match: str, request_id: int, action: Action) -> None:
        """A bot's ``action`` message for this table."""
        seat = self._seat_of(conn)
        if seat is None:
            conn.send_error(ErrorCode.UNKNOWN_REQUEST,
                            f"this connection holds no seat in match {match!r}", request_id)
            return
        pending = self._pending
        if (pending is None or pending.id != request_id or pending.seat != seat.index
                or pending.settled is not None):  # settled, not yet applied
            if request_id in seat.issued:
                self._error(conn, ErrorCode.LATE,
                            f"request {request_id} is already settled; answer ignored", request_id)
            else:
                self._error(conn, ErrorCode.UNKNOWN_REQUEST,
                            f"request {request_id} was never sent to seat {seat.index}", request_id)
            return
        try:
            canonical = self.engine.check_action(action)
        except IllegalActionError as exc:
            seat.illegal += 1
            if self.metrics is not None:
                self.metrics.illegal()
            self._error(conn, ErrorCode.ILLEGAL_ACTION,
                        f"{exc}; answer again before the deadline", request_id)
            return
        elapsed_ms = (self._loop.time() - pending.sent_at) * 1000.0  # type: ignore[union-attr]
        seat.latencies_ms.append(round(elapsed_ms, 3))
        self._charge_bank(seat, elapsed_ms)
        seat.consecutive_timeouts = 0
        pending.settled = (canonical, "bot")
        # Applied at once: nothing else has to reach the seats before it.
        self._step(self._apply_settled)

    def seat_disconnected(self, conn: "BotConnection") -> None:
        seat = self._seat_of(conn)
        if seat is None or self.finished.is_set():
            return
        seat.conn = None
        seat.disconnects += 1
        self.log.info("seat_disconnected", seat=seat.index, bot=seat.name)
        if all(s.kind is SeatKind.HOUSE or s.conn is None for s in self.seats):
            self._abandoned = True
            pending = self._pending
            if pending is not None and pending.settled is None:
                self._fail(MatchAbandonedError())
            return
        if seat.autopilot is None:
            self._start_autopilot(seat, AutopilotReason.DISCONNECTED)

    def reattach(self, conn: "BotConnection") -> bool:
        """Give a reconnecting bot its seat back (same token, seat unattended)."""
        if self.finished.is_set() or conn.identity is None:
            return False
        for seat in self.seats:
            if (seat.kind is SeatKind.REMOTE and seat.token_hash == conn.identity.token_hash
                    and (seat.conn is None or seat.conn.closed)
                    and seat.autopilot is not AutopilotReason.TIMEOUTS):
                seat.conn = conn
                seat.autopilot = None
                conn.seated = self
                self.log.info("seat_reattached", seat=seat.index, bot=seat.name)
                self._send_match_start(seat)
                pending = self._pending
                if pending is not None and pending.seat == seat.index:
                    self._send_request(seat, pending, resend=True)
                return True
        return False

    def holds(self, conn: "BotConnection") -> bool:
        return self._seat_of(conn) is not None

    # -- the match loop ---------------------------------------------------------
    # A plain callback state machine, not a coroutine awaiting each decision:
    # a bot's answer is applied inside ``answer`` and the next request goes
    # out in the same call, so a decision costs no future, task wake-up or
    # timer of its own. ``run`` awaits ``_done``, which every step resolves
    # (the match is over) or fails (an error, or every bot has left).
    #
    #   _advance -> remote seat: _ask; then answer (at once), or _deadline /
    #               _start_autopilot (next loop turn) -> _apply_settled
    #            -> house seat: _house_move (next loop turn)
    #   both end in _decide: apply the action, _emit its events, _advance.

    def _step(self, fn: Callable[..., None], *args: Any) -> None:
        """Run one step of the match; an error ends the match (``run`` sees it)."""
        done = self._done
        if done is None or done.done():
            return  # over, cancelled or failed: late callbacks do nothing
        try:
            fn(*args)
        except Exception as exc:
            self._fail(exc)

    def _fail(self, exc: Exception) -> None:
        if self._done is not None and not self._done.done():
            self._done.set_exception(exc)

    def _advance(self) -> None:
        """Ask for the next decision, or end the match."""
        if self._abandoned:
            raise MatchAbandonedError()
        engine = self.engine
        if engine.finished:
            self._done.set_result(None)  # type: ignore[union-attr]
            return
        seat = self.seats[engine.current_seat]  # type: ignore[index]
        if seat.asks_remote:
            self._ask(seat)
        else:
            # On the loop's next turn: other tables and connections run
            # between house moves.
            self._loop.call_soon(self._step, self._house_move, seat)  # type: ignore[union-attr]

    def _house_move(self, seat: Seat) -> None:
        engine = self.engine
        if engine.finished:  # cannot happen; end the match rather than hang
            self._advance()
            return
        phase = engine.phase or ""
        action = seat.house(phase, engine.legal_actions(), engine.observation(seat.index))
        self._decide(seat, phase, action, "house" if seat.kind is SeatKind.HOUSE else "autopilot")

    def _decide(self, seat: Seat, phase: str, action: Action, source: str) -> None:
        if source in ("default", "autopilot"):
            # The engine's own records carry every action; this one says
            # who chose it when it was not the seat's bot or house bot.
            self._record({"kind": "action", "seat": seat.index, "phase": phase,
                          "action": action, "source": source})
        if self.metrics is not None:
            self.metrics.decision()
        self._emit(self.engine.apply(action))
        self._advance()

    def _ask(self, seat: Seat) -> None:
        loop = self._loop
        assert loop is not None
        request_id = self._next_id
        self._next_id += 1
        phase = self.engine.phase or ""
        deadline_ms = self.limits.decision_ms + int(seat.bank_ms)
        legal = self.engine.legal_actions()
        wire = {"type": "request", "match": self.match_id, "id": request_id, "phase": phase,
                "deadline_ms": deadline_ms, "legal": legal,
                "state": self.engine.observation(seat.index)}
        now = loop.time()
        deadline_s = deadline_ms / 1000.0
        pending = PendingRequest(id=request_id, seat=seat.index, phase=phase, legal=legal,
                                 wire=wire, sent_at=now, deadline_s=deadline_s,
                                 deadline_at=now + deadline_s)
        seat.issued.add(request_id)
        self._pending = pending
        self._arm_timer(pending.deadline_at)
        self._send_request(seat, pending)

    def _apply_settled(self) -> None:
        pending = self._pending
        if pending is None or pending.settled is None:
            return
        self._pending = None
        action, source = pending.settled
        self._decide(self.seats[pending.seat], pending.phase, action, source)

    def _settle_later(self, pending: PendingRequest, action: Action, source: str) -> None:
        """Settle from a timer or a disconnect; applied on the loop's next
        turn, after whatever the caller still emits (``timeout``,
        ``autopilot``), so those events come before the action's."""
        if pending.settled is None:
            pending.settled = (action, source)
            self._loop.call_soon(self._step, self._apply_settled)  # type: ignore[union-attr]

    # One deadline timer per table, reused: requests follow each other much
    # faster than deadlines pass, so instead of a timer per request the timer
    # stays armed and, when it fires early (armed for an earlier request), is
    # moved to the current request's deadline.
    def _arm_timer(self, at: float) -> None:
        timer = self._timer
        if timer is not None:
            if timer.when() <= at:
                return  # fires first; _on_timer moves it on
            timer.cancel()
        self._timer = self._loop.call_at(at, self._on_timer)  # type: ignore[union-attr]

    def _on_timer(self) -> None:
        timer, self._timer = self._timer, None
        pending = self._pending
        if timer is None or pending is None or pending.settled is not None:
            return
        if timer.when() < pending.deadline_at:
            self._arm_timer(pending.deadline_at)
        else:
            self._step(self._deadline, pending)

    def _stop_asking(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._pending = None

    def _deadline(self, pending: PendingRequest) -> None:
        seat = self.seats[pending.seat]
        seat.timeouts += 1
        seat.consecutive_timeouts += 1
        seat.bank_ms = 0.0
        if self.metrics is not None:
            self.metrics.timeout()
        self.log.info("decision_timeout", seat=seat.index, bot=seat.name, phase=pending.phase)
        self._settle_later(pending, self.engine.default_action(), "default")
        self._emit([ServerEvent("timeout", seat=seat.index, phase=pending.phase)])
        if seat.consecutive_timeouts >= self.limits.timeouts_before_autopilot:
            self._start_autopilot(seat, AutopilotReason.TIMEOUTS)

    def _start_autopilot(self, seat: Seat, reason: AutopilotReason) -> None:
        seat.autopilot = reason
        self.log.info("autopilot", seat=seat.index, bot=seat.name, reason=reason.value)
        self._emit([ServerEvent("autopilot", seat=seat.index, reason=reason.value)])
        pending = self._pending
        if pending is not None and pending.seat == seat.index and pending.settled is None:
            engine = self.engine
            action = seat.house(pending.phase, pending.legal, engine.observation(seat.index))
            self._settle_later(pending, action, "autopilot")

    def _charge_bank(self, seat: Seat, elapsed_ms: float) -> None:
        over = elapsed_ms - self.limits.decision_ms
        if over > 0:
            seat.bank_ms = max(0.0, seat.bank_ms - over)

    # -- sending ---------------------------------------------------------------
    def _emit(self, events: list[GameEvent]) -> None:
        """Forward events: each seat what it may see, storage everything,
        spectators the public form. Each distinct payload is encoded once
        per encoding for all seats, and each record once as JSON (storage
        and the live hub share that text when the public form is the record)."""
        records = self._records
        public_log: list[tuple[dict[str, Any], str | None]] = []
        # The seats to send to, with their encodings (fixed for this call).
        targets = [(seat.index, conn.encoding) for seat in self.seats
                   if (conn := seat.conn) is not None and not conn.closed]
        out = self._out
        frame = self._envelope.frame
        flush = False
        for event in events:
            if event.kind == "deal":
                records.append(encode_record(event.for_record()))
                event = self._commit(event)
            record = event.for_record()
            text = encode_record(record)
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
                chunks = out[index]
                chunks.append(data)
                if len(chunks) >= FLUSH_AT_EVENTS:
                    flush = True
            if event.kind in FLUSH_KINDS:
                flush = True
        if public_log and self.hub is not None:
            self.hub.match_events(self.match_id, public_log)
        if flush:
            self._flush()
        self._persist()

    def _flush(self) -> None:
        for seat in self.seats:
            chunks = self._out[seat.index]
            if not chunks:
                continue
            if seat.conn is not None and not seat.conn.closed:
                seat.conn.send_bytes(b"".join(chunks) if len(chunks) > 1 else chunks[0])
            chunks.clear()

    def _send_request(self, seat: Seat, pending: PendingRequest, *, resend: bool = False) -> None:
        conn = seat.conn
        if conn is None or conn.closed:
            return
        wire = pending.wire
        if resend:  # to a reconnected bot: only the time that is left
            remaining_ms = max(0, int(pending.deadline_s * 1000 - (
                asyncio.get_running_loop().time() - pending.sent_at) * 1000))
            wire = {**wire, "deadline_ms": remaining_ms}
        chunks = self._out[seat.index]
        chunks.append(self._envelope.encode(wire, conn.encoding))
        conn.send_bytes(b"".join(chunks))
        chunks.clear()
        conn.grant()

    def _send_match_start(self, seat: Seat) -> None:
        if seat.conn is None:
            return
        seat.conn.send({"type": "match_start", "match": self.match_id, "game": self.spec.name,
                        "seat": seat.index, "players": self.players, "rules": self.engine.rules,
                        "limits": self.limits.to_wire()})

    def _error(self, conn: "BotConnection", code: ErrorCode, message: str,
               request_id: int | None) -> None:
        if self.metrics is not None:
            self.metrics.error(code.value)
        conn.send_error(code, message, request_id)

    def _commit(self, deal_event: GameEvent) -> ServerEvent:
        deal = deal_event.deal  # type: ignore[attr-defined]
        salt = new_salt()
        self._salts[(deal.round, deal.hand)] = salt
        return ServerEvent("commit", round=deal.round, hand=deal.hand,
                           commitment=commitment(salt, deal.deck))

    def _reveal(self) -> list[dict[str, Any]]:
        return [{"round": d.round, "hand": d.hand, "salt": self._salts[(d.round, d.hand)],
                 "deck": list(d.deck)} for d in self.engine.deals()]

    # -- storage ---------------------------------------------------------------
    def _record(self, data: dict[str, Any]) -> None:
        self._records.append(encode_record(data))

    def _persist(self) -> None:
        """Hand the records of one step to storage, numbered and stamped
        together (one clock read per decision, not per record)."""
        records = self._records
        if records:
            self.writer.append_encoded_nowait(self.match_id, self._seq, time.time(), records)
            self._seq += len(records)
            self._records = []

    async def _finish(self) -> dict[str, Any]:
        result = self.engine.result()
        reveal = self._reveal()
        self._flush()
        self._persist()
        await self.writer.finish_match(
            self.match_id, result=result, reveal=reveal,
            faults=[seat.faults() for seat in self.seats],
            latency_ms=[seat.latencies_ms for seat in self.seats], finished_at=time.time(),
            slot=self.slot)
        self.result = result
        message = {"type": "match_end", "match": self.match_id, "result": result, "reveal": reveal}
        encoded: dict[Encoding, bytes] = {}
        for seat in self.seats:
            conn = seat.conn
            if conn is not None and not conn.closed:
                data = encoded.get(conn.encoding)
                if data is None:
                    data = encoded[conn.encoding] = encode(message, conn.encoding)
                conn.send_bytes(data)
        if self.metrics is not None:
            self.metrics.match_finished()
        if self.hub is not None:
            self.hub.match_ended(self.match_id, {"result": result, "players": self.players})
            self.hub.standings_changed(self.tournament_id or "ladder")
        self.log.info("match_finished", stars=result.get("stars"), ranks=result.get("ranks"))
        return result

    async def _abort(self, reason: str) -> None:
        self.aborted = reason
        self._flush()
        self._persist()
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

    def _release_seats(self) -> None:
        for seat in self.seats:
            conn = seat.conn
            if conn is not None and conn.seated is self:
                conn.seated = None
                if not conn.closed and self._on_seat_released is not None:
                    self._on_seat_released(conn)

    def _seat_of(self, conn: "BotConnection") -> Seat | None:
        for seat in self.seats:
            if seat.conn is conn:
                return seat
        return None

