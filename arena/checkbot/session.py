"""One checker run's state and the request/answer referee.

The referee behaves like the arena server (protocol §4): an answer that is
not legal gets ``illegal_action`` and the request stays open; at the deadline
the default action (rules §11) is applied and a ``timeout`` event is sent; an
answer to a settled request gets ``late``, one to an id never issued gets
``unknown_request``. Everything the bot sent is recorded for the verdicts.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Protocol

from arena.checkbot.hand import Ask, Assessment, Phase, Tell, short
from arena.checkbot.link import BotLink, LinkClosed, Listener


class ScriptMatch(Protocol):
    """What the referee needs of a scripted match, whatever the game
    (``script.ScriptedMatch`` for Muushig, ``thirteen.ThirteenMatch``)."""

    match_id: str
    seat: int
    next_id: int

    def next_step(self) -> Tell | Ask | None: ...
    def settle(self, action: Any) -> None: ...
    def take_id(self) -> int: ...
    def assess(self, ask: Ask, action: Any) -> Assessment: ...
    def default(self, ask: Ask) -> Any: ...
    def event(self, tell: Tell) -> dict[str, Any]: ...
    def request(self, ask: Ask, request_id: int, deadline_ms: int) -> dict[str, Any]: ...
    def match_start(self) -> dict[str, Any]: ...
    def match_end(self) -> dict[str, Any]: ...

REJECT_MESSAGE = (
    "the compliance checker rejects the first answer to this request on purpose, "
    "even though it was legal: answer again with a legal action"
)


# An SDK that answered for a failed strategy marks the action with this
# field (the Python SDK does); the checker fails such an answer even though
# what went over the wire is legal.
FALLBACK_FIELD = "sdk_fallback"


@dataclass
class Answer:
    action: Any
    latency_ms: float
    legal: bool  # whether the action on the wire is legal
    fallback: dict[str, Any] | None = None  # the SDK's mark: the strategy failed
    warning: str = ""  # accepted, but it costs the bot (a fouled arrangement)
    reason: str = ""  # why it was refused (the illegal_action message)

    @property
    def own(self) -> bool:
        """A legal answer the bot's own logic chose."""
        return self.legal and self.fallback is None

    def describe_fallback(self) -> str:
        mark = self.fallback or {}
        reason = {"illegal": "answered {answered}, which is not legal",
                  "raised": "raised {answered}",
                  "timeout": "overran its time"}.get(str(mark.get("reason")), "failed ({reason})")
        what = reason.format(answered=mark.get("answered", "?"), reason=short(mark.get("reason")))
        return f"the strategy {what}; the SDK sent {short(self.action)} instead (sdk_fallback)"


@dataclass
class Pending:
    """One request sent to the bot, and what became of it."""

    match: ScriptMatch
    ask: Ask
    id: int
    deadline_ms: int
    reject_first: bool = False
    extra: dict[str, Any] = field(default_factory=dict)
    sent_at: float = 0.0
    answers: list[Answer] = field(default_factory=list)
    settled: bool = False
    timed_out: bool = False
    applied: Any = None

    @property
    def label(self) -> str:
        return f"{self.ask.phase} request #{self.id} of match {self.match.match_id}"

    @property
    def answered_in_time(self) -> bool:
        return bool(self.answers)

    @property
    def first_latency_ms(self) -> float | None:
        return self.answers[0].latency_ms if self.answers else None


@dataclass
class Session:
    """Everything one run of the checker knows."""

    listener: Listener
    process: asyncio.subprocess.Process
    token: str
    name: str
    deadline_ms: int
    short_deadline_ms: int
    connect_timeout_s: float
    check_timeout_s: float = 60.0
    # Starts the bot again with extra environment variables (the
    # max_matches check runs a second copy); set by the runner.
    respawn: Callable[[dict[str, str]], Awaitable[asyncio.subprocess.Process]] | None = None
    link: BotLink | None = None
    bot_name: str = ""
    encoding: str | None = None
    match_a: ScriptMatch | None = None
    issued: dict[tuple[str, int], Pending] = field(default_factory=dict)
    requests: list[Pending] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    bot_said_bye: bool = False
    declared_max_matches: Any = None  # hello.max_matches of the last hello, if any
    aborted: str | None = None
    # The game's script (a ``games.GameScript``; the runner sets it).
    game: Any = None
    # Hand-offs between consecutive checks.
    first_request: Pending | None = None
    play_request: Pending | None = None
    sealed_end: dict[str, Any] | None = None  # a match_end sent without its reveal

    def need_link(self) -> BotLink:
        if self.link is None:
            raise LinkClosed("no connection from the bot")
        return self.link

    async def send(self, message: dict[str, Any]) -> None:
        await self.need_link().send(message)

    async def wait_for_link(self, timeout: float) -> BotLink | None:
        """A new connection, or None if the bot exited or took too long."""
        link_task = asyncio.ensure_future(self.listener.next_link(timeout))
        exit_task = asyncio.ensure_future(self.process.wait())
        try:
            await asyncio.wait({link_task, exit_task}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            exit_task.cancel()
        if not link_task.done():
            link_task.cancel()
            return None
        return link_task.result()

    # --- script driving ---------------------------------------------------

    async def next_ask(self, match: ScriptMatch) -> Ask | None:
        """Send the match's events up to its next request; None at its end."""
        while (step := match.next_step()) is not None:
            if isinstance(step, Tell):
                await self.send(match.event(step))
            else:
                return step
        return None

    def prepare(self, match: ScriptMatch, ask: Ask, *, deadline_ms: int | None = None,
                reject_first: bool = False, extra: dict[str, Any] | None = None) -> Pending:
        pending = Pending(match=match, ask=ask, id=match.take_id(),
                          deadline_ms=deadline_ms or self.deadline_ms,
                          reject_first=reject_first, extra=extra or {})
        self.issued[(match.match_id, pending.id)] = pending
        self.requests.append(pending)
        return pending

    async def drive_to(self, match: ScriptMatch, phase: Phase) -> Ask | None:
        """Play the match on to its next ``phase`` request.

        Requests of other phases on the way are sent and refereed as usual
        (they count in the final "every answer" check).
        """
        while (ask := await self.next_ask(match)) is not None:
            if ask.phase is phase:
                return ask
            await self.referee([self.prepare(match, ask)])
        return None

    # --- the referee ------------------------------------------------------

    async def referee(self, batch: list[Pending]) -> None:
        """Send every request in ``batch`` then settle each, by a legal
        answer or at its deadline."""
        link = self.need_link()
        for p in batch:
            message = p.match.request(p.ask, p.id, p.deadline_ms)
            message.update(p.extra)
            await link.send(message)
            p.sent_at = time.monotonic()
        for p in batch:
            for tell in p.ask.followups:
                await link.send(p.match.event(tell))
        while True:
            open_ = [p for p in batch if not p.settled]
            if not open_:
                return
            now = time.monotonic()
            expired = [p for p in open_ if now >= p.sent_at + p.deadline_ms / 1000]
            for p in expired:
                await self._settle(p, p.match.default(p.ask), timed_out=True)
            if expired:
                continue
            wait = min(p.sent_at + p.deadline_ms / 1000 for p in open_) - now
            incoming = await link.receive(wait)
            if incoming is not None:
                await self.handle(incoming)

    async def _settle(self, p: Pending, action: Any, *, timed_out: bool = False) -> None:
        p.settled, p.timed_out, p.applied = True, timed_out, action
        p.match.settle(action)
        if timed_out:
            event = {"kind": "timeout", "seat": p.match.seat, "phase": str(p.ask.phase)}
            await self.send(p.match.event(Tell(event)))

    async def handle(self, message: dict[str, Any]) -> None:
        """Referee one message from the bot outside the handshake."""
        kind = message.get("type")
        if kind == "bye":
            self.bot_said_bye = True
            return
        if kind != "action":
            self.notes.append(f"sent a message of type {short(kind)} (expected action)")
            await self.send({"type": "error", "code": "unknown_type",
                             "message": f"unknown message type {short(kind)}; a bot sends hello, action or bye"})
            return
        key = (message.get("match"), message.get("id"))
        p = self.issued.get(key)  # type: ignore[arg-type]
        if p is None:
            self.notes.append(f"answered match {short(key[0])} id {short(key[1])}, a request never sent")
            await self.send({"type": "error", "code": "unknown_request", "id": key[1],
                             "message": f"no request {short(key[1])} was issued in match {short(key[0])}"})
            return
        if p.settled:
            self.notes.append(f"answered {p.label} after it was settled")
            await self.send({"type": "error", "code": "late", "id": p.id, "match": p.match.match_id,
                             "message": f"request {p.id} was already settled"})
            return
        action = message.get("action")
        latency = (time.monotonic() - p.sent_at) * 1000
        verdict = p.match.assess(p.ask, action) if "action" in message else Assessment(
            legal=False, reason="the answer has no 'action' field")
        legal = verdict.legal
        mark = message.get(FALLBACK_FIELD)
        fallback = mark if isinstance(mark, dict) else ({"reason": short(mark)} if mark is not None else None)
        p.answers.append(Answer(action=action, latency_ms=latency, legal=legal, fallback=fallback,
                              warning=verdict.warning, reason=verdict.reason))
        if p.reject_first and len(p.answers) == 1 and legal:
            await self.send({"type": "error", "code": "illegal_action", "id": p.id,
                             "match": p.match.match_id, "message": REJECT_MESSAGE})
            return
        if not legal:
            await self.send({"type": "error", "code": "illegal_action", "id": p.id,
                             "match": p.match.match_id, "message": verdict.reason})
            return
        await self._settle(p, verdict.applied)
