"""The asyncio bot client: connect, say hello, answer every request in time.

A bot author writes one function ``(phase, legal, state) -> action`` and hands
it to :class:`BotClient` (or to :func:`protocol.sdk.run_bot`). The client

* keeps one connection, multiplexing every match by its ``match`` id;
* answers each ``request`` before ``deadline_ms`` -- with the arena's default
  action if the strategy raises, overruns, or answers something not legal;
  every such fallback is logged as a warning, counted (``fallbacks``,
  ``fallback_counts``, per match in ``MatchInfo.fallbacks``) and marked on
  the wire (``sdk_fallback`` in the action, which servers ignore and
  ``arena check-bot`` fails), so a broken strategy never passes unnoticed;
* answers again after ``illegal_action`` with a legal fallback;
* reconnects with bounded exponential backoff after a dropped connection
  (the server gives the seat back and resends ``match_start``);
* leaves cleanly on ``bye``, on :meth:`BotClient.stop`, on cancellation, or
  after ``max_matches`` finished matches.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import random
from collections import Counter, deque
from enum import Enum
from typing import Any, Awaitable, Callable

import structlog

from protocol.codec import Encoding
from protocol.deals import deal_key
from protocol.errors import ErrorCode, FrameError, MessageError, UnknownTypeError
from protocol.messages import (PROTOCOL_VERSION, Action, Bye, Error, Event, Hello, MatchEnd,
                               MatchStart, Move, Request, Reveal, Welcome, parse_server_message)
from protocol.sdk.connection import Connection
from protocol.sdk.matches import ConnectionLostError, HandshakeError, MatchInfo, PendingRequest, ServerUnreachableError
from protocol.sdk.reveals import DealChecks
from protocol.sdk.strategy import (
    FALLBACK_FIELD,
    FallbackReason,
    Strategy,
    call_strategy,
    default_action,
    legal_index,
)

log = structlog.get_logger("protocol.sdk")

Hook = Callable[..., Any | Awaitable[Any]]

_MAX_OPEN_MATCHES = 256
_FINISHED_KEPT = 100


class _Outcome(Enum):
    SERVER_BYE = "server said bye"
    DONE = "max_matches reached"
    STOPPED = "stopped"
    DROPPED = "connection dropped"
    MOVED = "moved to another node"


async def _call_hook(hook: Hook | None, *args: Any) -> None:
    if hook is None:
        return
    try:
        result = hook(*args)
        if inspect.isawaitable(result):
            await result
    except asyncio.CancelledError:
        raise
    except Exception:
        # A broken hook must not cost the bot its matches.
        log.exception("bot hook raised", hook=getattr(hook, "__name__", repr(hook)))


class BotClient:
    """One bot process's connection to the arena.

    ``strategy(phase, legal, state)`` returns the action (or is ``async``).
    Hooks, plain or ``async``, keep them quick: ``on_match_start(info)``,
    ``on_event(info, event)``, ``on_match_end(info, match_end)``,
    ``on_reveal(info, reveal)`` (the deferred reveal of a sealed match,
    protocol §6, after its commitments were checked: ``info.deal_problems``).
    ``follow_moves``: hello says ``movable``; a ``move`` is followed at once.
    """

    def __init__(
        self,
        host: str,
        port: int,
        token: str,
        name: str | None,
        strategy: Strategy,
        encoding: Encoding | str = Encoding.MSGPACK,
        *,
        on_match_start: Hook | None = None,
        on_event: Hook | None = None,
        on_match_end: Hook | None = None,
        on_reveal: Hook | None = None,
        max_matches: int | None = None,
        ladder: bool = False,
        people: bool = False,
        reconnect: bool = True,
        max_reconnect_attempts: int = 10,
        first_connect_attempts: int = 3,  # before the first welcome: then ServerUnreachableError
        backoff_initial_s: float = 0.1,
        backoff_max_s: float = 5.0,
        safety_margin_s: float = 0.1,
        threaded: bool = True,
        handshake_timeout_s: float = 10.0,
        game: str | None = None,
        follow_moves: bool = False,
    ) -> None:
        self.host = host
        self.port = port
        self.token = token
        self.name = name
        self.strategy = strategy
        self.encoding = Encoding(encoding)
        self.on_match_start = on_match_start
        self.on_event = on_event
        self.on_match_end = on_match_end
        self.on_reveal = on_reveal
        self.max_matches = max_matches
        self.ladder = ladder  # hello.ladder: the hosted ladder may seat this bot
        self.people = people  # hello.people: a person's table may seat this bot
        self.reconnect = reconnect
        self.max_reconnect_attempts, self.first_connect_attempts = max_reconnect_attempts, first_connect_attempts
        self.backoff_initial_s = backoff_initial_s
        self.backoff_max_s = backoff_max_s
        self.safety_margin_s = safety_margin_s
        self.threaded, self.handshake_timeout_s = threaded, handshake_timeout_s
        self.game = game  # sent in hello: which game's tables to wait for
        self.follow_moves, self.moves = follow_moves, 0  # hello.movable; moves followed

        self.matches: dict[str, MatchInfo] = {}
        self.finished: deque[MatchInfo] = deque(maxlen=_FINISHED_KEPT)
        self.deal_checks = DealChecks()
        self.matches_played = 0
        self.connections = 0  # successful handshakes so far
        # Answers the SDK chose because the strategy failed, by reason.
        self.fallback_counts: Counter[FallbackReason] = Counter()
        self.welcome: Welcome | None = None
        self._conn: Connection | None = None
        self._stopping = False
        self._executor: concurrent.futures.ThreadPoolExecutor | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._last_session_welcomed = False
        self._error_match: str | None = None

    # -- public --

    @property
    def fallbacks(self) -> int:
        """How many answers the SDK chose because the strategy failed."""
        return sum(self.fallback_counts.values())

    async def run(self) -> None:
        """Play until the server says bye, ``max_matches`` are done, or
        :meth:`stop`. Raises :class:`HandshakeError` if the server refuses
        the hello, :class:`ConnectionLostError` if it cannot stay connected."""
        if self.threaded:
            self._executor = concurrent.futures.ThreadPoolExecutor(max_workers=4, thread_name_prefix="bot-strategy")
        failures = 0
        try:
            while not self._stopping:
                try:
                    outcome = await self._session()
                except (OSError, TimeoutError, FrameError) as exc:
                    if not self.connections and failures + 1 >= self.first_connect_attempts:
                        raise ServerUnreachableError(self.host, self.port, exc) from None
                    if self.connections:  # before any welcome: quiet, the raise above says it all
                        log.warning("connection failed", host=self.host, port=self.port, error=str(exc) or type(exc).__name__)
                    outcome = _Outcome.DROPPED
                if self._last_session_welcomed:
                    failures = 0  # the backoff restarts after every good connection
                if outcome is _Outcome.MOVED and not self._stopping:
                    continue  # to the node named, at once
                if outcome is not _Outcome.DROPPED or self._stopping:
                    log.info("bot finished", reason=outcome.value, matches=self.matches_played)
                    return
                if not self.reconnect:
                    raise ConnectionLostError(f"lost the connection to {self.host}:{self.port}")
                failures += 1
                if failures > self.max_reconnect_attempts:
                    raise ConnectionLostError(f"gave up on {self.host}:{self.port} after "
                                              f"{self.max_reconnect_attempts} reconnect attempts")
                delay = min(self.backoff_max_s, self.backoff_initial_s * 2 ** (failures - 1))
                delay *= random.uniform(0.5, 1.0)  # jitter: a restarted server is not hit by every bot at once
                if self.connections:
                    log.info("reconnecting", attempt=failures, delay_s=round(delay, 3))
                await asyncio.sleep(delay)
        finally:
            if self._executor is not None:
                self._executor.shutdown(wait=False, cancel_futures=True)
                self._executor = None

    async def stop(self) -> None:
        """Say bye and close; :meth:`run` then returns."""
        self._stopping = True
        conn = self._conn
        if conn is not None:
            try:
                await conn.send(Bye().to_wire())
            except OSError:
                pass
            await conn.close()

    # -- one connection --

    async def _session(self) -> _Outcome:
        self._last_session_welcomed = False
        # asyncio.timeout, not wait_for: on Python 3.11 wait_for can swallow a
        # cancellation that arrives just as the awaited call completes.
        async with asyncio.timeout(self.handshake_timeout_s):
            reader, writer = await asyncio.open_connection(self.host, self.port)
        conn = Connection(reader, writer, self.encoding)
        self._conn = conn
        try:
            # The server then never seats this connection for one match too many.
            left = None if self.max_matches is None else max(1, self.max_matches - self.matches_played)
            await conn.send(Hello(PROTOCOL_VERSION, self.token, self.name, self.game,
                                  max_matches=left, ladder=self.ladder,
                                  people=self.people, movable=self.follow_moves).to_wire())
            async with asyncio.timeout(self.handshake_timeout_s):
                welcome = await self._handshake(conn)
            if welcome is None:
                return _Outcome.STOPPED if self._stopping else _Outcome.DROPPED
            self._last_session_welcomed = True
            self.welcome = welcome
            self.connections += 1
            log.info("connected", bot=welcome.bot, server=welcome.server, connection=self.connections)
            return await self._serve(conn)
        except asyncio.CancelledError:
            conn.send_nowait(Bye().to_wire())  # best effort: leave politely
            raise
        finally:
            self._conn = None
            await conn.close()

    async def _handshake(self, conn: Connection) -> Welcome | None:
        while True:
            raw = await conn.receive()
            if raw is None:
                return None
            try:
                message = parse_server_message(raw)
            except MessageError as exc:
                log.warning("ignoring a message before welcome", error=exc.message)
                continue
            if isinstance(message, Welcome):
                return message
            if isinstance(message, Error):
                raise HandshakeError(str(message.code), message.message)
            if isinstance(message, Bye):
                return None

    async def _serve(self, conn: Connection) -> _Outcome:
        async with asyncio.TaskGroup() as group:
            try:
                return await self._read_loop(conn, group)
            finally:
                # Answers for this connection are moot once it is gone; the
                # server resends pending requests after a reconnect.
                for task in list(self._tasks):
                    task.cancel()

    async def _read_loop(self, conn: Connection, group: asyncio.TaskGroup) -> _Outcome:
        while True:
            try:
                raw = await conn.receive()
            except (OSError, FrameError) as exc:
                log.warning("connection broken", error=str(exc) or type(exc).__name__)
                return _Outcome.DROPPED
            if raw is None:
                return _Outcome.STOPPED if self._stopping else _Outcome.DROPPED
            try:
                message = parse_server_message(raw)
            except UnknownTypeError as exc:
                log.debug("ignoring unknown message type", type=exc.type_name)
                continue
            except MessageError as exc:
                log.warning("ignoring an invalid server message", error=exc.message)
                continue
            if isinstance(message, Error) and isinstance(raw, dict):
                # Errors name their match (request ids repeat across matches).
                match = raw.get("match")
                self._error_match = match if isinstance(match, str) else None
            outcome = await self._dispatch(message, conn, group)
            if outcome is not None:
                return outcome

    async def _dispatch(self, message: Any, conn: Connection, group: asyncio.TaskGroup) -> _Outcome | None:
        if isinstance(message, Request):
            info = self._info(message.match)
            info.state = message.state
            info.requests += 1
            expires = asyncio.get_running_loop().time() + message.deadline_ms / 1000
            info.pending = PendingRequest(message, expires)
            task = group.create_task(self._answer(conn, info, info.pending))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        elif isinstance(message, Event):
            info = self._info(message.match)
            info.events += 1
            event = message.event
            if event.get("kind") == "commit":
                try:
                    info.commits[deal_key(event)] = event["commitment"]
                except (KeyError, TypeError):
                    log.warning("commit event without its deal label or commitment", match=message.match)
            await _call_hook(self.on_event, info, event)
        elif isinstance(message, MatchStart):
            info = self._info(message.match)
            info.game, info.seat, info.players = message.game, message.seat, message.players
            info.rules, info.limits = message.rules, message.limits
            log.info("match started", match=message.match, seat=message.seat, players=list(message.players))
            await _call_hook(self.on_match_start, info)
        elif isinstance(message, MatchEnd):
            return await self._match_end(message, conn)
        elif isinstance(message, Reveal):  # a sealed match's deferred reveal
            await _call_hook(self.on_reveal, self.deal_checks.revealed(message), message)
        elif isinstance(message, Error):
            await self._error(message, conn)
        elif isinstance(message, Move) and self.follow_moves:  # its slot is played there
            log.info("moving", host=message.host, port=message.port, reason=message.reason)
            self.host, self.port, self.moves = message.host, message.port, self.moves + 1
            return _Outcome.MOVED
        elif isinstance(message, Bye):
            return _Outcome.SERVER_BYE
        return None

    def _info(self, match: str) -> MatchInfo:
        info = self.matches.get(match)
        if info is None:
            if len(self.matches) >= _MAX_OPEN_MATCHES:
                oldest = next(iter(self.matches))
                log.warning("too many open matches; forgetting the oldest", match=oldest)
                del self.matches[oldest]
            info = self.matches[match] = MatchInfo(match)
        return info

    async def _match_end(self, message: MatchEnd, conn: Connection) -> _Outcome | None:
        info = self.matches.pop(message.match, None) or MatchInfo(message.match)
        info.pending = None
        info.result = message.result
        self.deal_checks.ended(info, message)
        self.finished.append(info)
        self.matches_played += 1
        log.info("match ended", match=message.match, result=message.result)
        await _call_hook(self.on_match_end, info, message)
        if self.max_matches is not None and self.matches_played >= self.max_matches:
            self._stopping = True
            try:
                await conn.send(Bye().to_wire())
            except OSError:
                pass
            return _Outcome.DONE
        return None

    # -- answering --

    def _budget(self, deadline_ms: int) -> float:
        """Seconds the strategy may think: the deadline minus a margin for the
        network (at most a fifth of a short deadline)."""
        seconds = deadline_ms / 1000
        return max(0.0, seconds - min(self.safety_margin_s, seconds / 5))

    async def _answer(self, conn: Connection, info: MatchInfo, pending: PendingRequest) -> None:
        request = pending.request
        if request.constraints is not None:
            await self._answer_constrained(conn, info, pending)
            return
        fallback = default_action(request.phase, request.legal)
        reason: FallbackReason | None = None
        answered: Any = None
        try:
            action = await call_strategy(
                self.strategy,
                request.phase,
                request.legal,
                request.state,
                timeout=self._budget(request.deadline_ms),
                executor=self._executor,
            )
        except asyncio.CancelledError:
            raise
        except TimeoutError:
            reason, answered = FallbackReason.TIMEOUT, None
        except Exception as exc:
            log.exception("strategy raised", match=info.match, id=request.id, phase=request.phase)
            reason, answered = FallbackReason.RAISED, exc
        else:
            index = legal_index(action, request.legal)
            if index is None:
                reason, answered = FallbackReason.ILLEGAL, action
            else:
                action = request.legal[index]
        mark: dict[str, str] | None = None
        if reason is not None:
            action = fallback
            mark = {"reason": str(reason), "answered": repr(answered)[:80]}
            self.fallback_counts[reason] += 1
            info.fallbacks += 1
            log.warning(
                "the SDK answered for the strategy", reason=str(reason), answered=mark["answered"],
                sent=repr(fallback)[:80], match=info.match, id=request.id, phase=request.phase,
                fallbacks=self.fallbacks,
            )
        await self._send_action(conn, info, pending, action, fallback=mark)

    async def _answer_constrained(self, conn: Connection, info: MatchInfo, pending: PendingRequest) -> None:
        """A request with ``constraints`` instead of a legal list: the strategy
        gets the constraints as its second argument and its answer goes out
        unchecked (the server checks it). Without a usable answer nothing is
        sent, and the server plays its default at the deadline."""
        request = pending.request
        try:
            action = await call_strategy(
                self.strategy,
                request.phase,
                request.constraints,  # type: ignore[arg-type]
                request.state,
                timeout=self._budget(request.deadline_ms),
                executor=self._executor,
            )
        except asyncio.CancelledError:
            raise
        except TimeoutError:
            log.warning("strategy overran its time; the server will play its default", match=info.match, id=request.id)
            return
        except Exception:
            log.exception("strategy raised; the server will play its default", match=info.match, id=request.id)
            return
        await self._send_action(conn, info, pending, action)

    async def _send_action(self, conn: Connection, info: MatchInfo, pending: PendingRequest, action: Any,
                           *, fallback: dict[str, str] | None = None) -> None:
        pending.tried.append(action)
        wire = Action(info.match, pending.request.id, action).to_wire()
        if fallback is not None:
            wire[FALLBACK_FIELD] = fallback
        try:
            await conn.send(wire)
        except (OSError, FrameError) as exc:
            # The reader sees the drop too and reconnects; nothing to do here.
            log.warning("could not send an action", match=info.match, error=str(exc))

    async def _error(self, message: Error, conn: Connection) -> None:
        pending = self._pending_for(message.id, self._error_match)
        if message.code == ErrorCode.ILLEGAL_ACTION and pending is not None:
            info, request = pending
            if request.request.constraints is not None:
                # No legal list to fall back on: send the strategy's answer once
                # more (the request stays open; a server may refuse an answer for
                # a passing reason), then leave it to the server's default.
                log.warning("server refused our action", match=info.match, id=message.id, reason=message.message)
                if len(request.tried) == 1 and asyncio.get_running_loop().time() < request.expires:
                    await self._send_action(conn, info, request, request.tried[0])
                return
            retry = self._next_try(request)
            log.warning("server refused our action", match=info.match, id=message.id, reason=message.message, retry=repr(retry)[:80])
            if retry is not _NOTHING and asyncio.get_running_loop().time() < request.expires:
                await self._send_action(conn, info, request, retry)
            return
        if message.code in (ErrorCode.LATE, ErrorCode.UNKNOWN_REQUEST) and pending is not None:
            pending[0].pending = None
        log.warning("server error", code=str(message.code), id=message.id, match=self._error_match,
                    message=message.message)

    def _pending_for(self, request_id: int | None, match: str | None = None) -> tuple[MatchInfo, PendingRequest] | None:
        # Ids are unique only within a match: an error naming its match picks
        # that match's request; without one (older servers), prefer the most
        # recently answered request with that id.
        if request_id is None:
            return None
        found = [
            (info, info.pending)
            for info in self.matches.values()
            if info.pending is not None and info.pending.request.id == request_id and info.pending.tried
            and (match is None or info.match == match)
        ]
        if not found:
            return None
        return max(found, key=lambda pair: pair[1].expires)

    @staticmethod
    def _next_try(pending: PendingRequest) -> Any:
        request = pending.request
        candidates = [default_action(request.phase, request.legal), *request.legal]
        for candidate in candidates:
            if not any(candidate == tried for tried in pending.tried):
                return candidate
        return _NOTHING


_NOTHING = object()
