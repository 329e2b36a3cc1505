"""In-process publish/subscribe for the live pages.

The server publishes what spectators may see (the *public* form of every
event, never a hidden card); web handlers subscribe and stream it out as
Server-Sent Events. Everything runs on the event loop thread.

Back-pressure policy: publishing never blocks and never fails. Each
subscriber has a bounded queue; when it is full, the **oldest** message is
dropped and the subscriber is told how many it lost with a
``{"type": "gap", "lost": n}`` message delivered before the next one, so a
page can refetch the state instead of showing a silently broken story.

Channels:

* ``match:<id>``       -- ``event`` (seq, at, data) and ``match_ended``
* ``matches``          -- ``match_started`` / ``match_ended`` of every match
* ``standings:<scope>``-- ``standings_changed`` (scope ``ladder`` or a
  tournament id)
* ``tournament:<id>``  -- ``progress`` and that tournament's
  ``standings_changed``
* ``tournaments``      -- ``progress`` of every tournament

Memory: the hub keeps only a recent tail of each match's public events
(``tail_events``), a few kilobytes a table however long the match; every
subscriber gets each event as it is published. A viewer who opens a match
later gets the events before the tail from the store, rebuilt in their
public form and numbered alike (:mod:`arena.live_history`). A match played
on another node (its info names the ``node``; the live bridge numbers its
events from where this node began to hear them) keeps its whole public log
up to ``max_log_events``, as the store's numbering may not match it.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import structlog

from arena.records import encode_record

log = structlog.get_logger(__name__)

Message = dict[str, Any]

# The public log keeps each event as JSON text (the stored events' form):
# strings the garbage collector never walks, not dicts and lists it walks at
# every full collection.
_dumps = encode_record

MATCHES_CHANNEL = "matches"
TOURNAMENTS_CHANNEL = "tournaments"
LADDER = "ladder"


# Why a running table was cancelled, as its aborted match is stored: the
# canceller says which, so an organiser reading a match aborted by a
# tournament's cancel is not told the server went down.
SERVER_SHUTTING_DOWN = "server shutting down"
TOURNAMENT_CANCELLED = "tournament cancelled"
SLOT_TAKEN_OVER = "slot taken over by another node"
MATCH_CANCELLED = "match cancelled"  # a cancel whose canceller gave no reason

# Abort reasons the server stores that a visitor may read as they are; any
# other (an exception's text, a storage error) is shown by its kind only.
PUBLIC_ABORT_REASONS = frozenset({"every bot disconnected", SERVER_SHUTTING_DOWN,
                                  "server restarted", TOURNAMENT_CANCELLED, SLOT_TAKEN_OVER,
                                  MATCH_CANCELLED})


def public_abort_reason(reason: str | None) -> str | None:
    if reason is None or reason in PUBLIC_ABORT_REASONS:
        return reason
    if reason.startswith("internal error"):
        return "internal error"
    return "aborted by the server"


class HubFullError(Exception):
    """Too many live subscribers; the client should retry later."""


@dataclass
class _LiveMatch:
    """One match's recent public events: ``texts[i]`` (JSON) published at
    ``ats[i]`` has seq ``next_seq - len(texts) + i``. Two flat deques, not a
    tuple per event: the events of one step share one float."""

    match_id: str
    info: dict[str, Any]
    texts: collections.deque[str]
    ats: collections.deque[float]
    next_seq: int = 0
    ended: bool = False
    summary: dict[str, Any] | None = None

    @property
    def first_seq(self) -> int:
        """The seq of the oldest event kept (``next_seq`` if none)."""
        return self.next_seq - len(self.texts)


class Subscription:
    """An async iterator of messages from one or more channels.

    Ends when the hub is closed. Cancelling a pending ``__anext__`` loses
    nothing: messages are only taken from the queue after the wait.
    """

    def __init__(self, channels: tuple[str, ...], maxlen: int) -> None:
        self.channels = channels
        self._queue: collections.deque[Message] = collections.deque()
        self._maxlen = maxlen
        self._wakeup = asyncio.Event()
        self._lost = 0
        self._closed = False

    def push(self, message: Message) -> None:
        if len(self._queue) >= self._maxlen:
            self._queue.popleft()
            self._lost += 1
        self._queue.append(message)
        self._wakeup.set()

    def close(self) -> None:
        self._closed = True
        self._wakeup.set()

    @property
    def lost(self) -> int:
        """Messages dropped so far and not yet reported by a ``gap``."""
        return self._lost

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> Message:
        while not self._queue and not self._lost:
            if self._closed:
                raise StopAsyncIteration
            self._wakeup.clear()
            await self._wakeup.wait()
        if self._lost:
            lost, self._lost = self._lost, 0
            return {"type": "gap", "lost": lost}
        return self._queue.popleft()


@dataclass
class _Limits:
    queue: int = 256  # messages per subscriber
    subscribers: int = 1000  # over all channels
    log_events: int = 50_000  # public events kept per match of another node
    tail_events: int = 128  # recent public events kept per match of this node
    recently_ended: int = 64  # ended matches whose public log is kept


class LiveHub:
    """Pub/sub hub plus the recent public events of every live match."""

    def __init__(self, *, queue_size: int = 256, max_subscribers: int = 1000,
                 max_log_events: int = 50_000, tail_events: int = 128, keep_ended: int = 64,
                 clock: Callable[[], float] = time.time) -> None:
        self._limits = _Limits(queue_size, max_subscribers, max_log_events,
                               min(tail_events, max_log_events), keep_ended)
        self._clock = clock
        self._subs: dict[str, set[Subscription]] = {}
        self._n_subs = 0
        self._live: dict[str, _LiveMatch] = {}
        # Ended matches stay readable for a moment: the store may still call
        # a match running when a page reacts to ``match_ended``.
        self._ended: collections.OrderedDict[str, _LiveMatch] = collections.OrderedDict()
        self._closed = False

    # -- publishing (server side) ------------------------------------------
    def match_started(self, match_id: str, info: dict[str, Any]) -> None:
        """``info``: game, players, tournament_id, started_at."""
        self._ended.pop(match_id, None)
        keep = self._limits.log_events if "node" in info else self._limits.tail_events
        self._live[match_id] = _LiveMatch(match_id, dict(info), collections.deque(maxlen=keep),
                                          collections.deque(maxlen=keep))
        self._publish(MATCHES_CHANNEL, {"type": "match_started", "match": match_id,
                                        "info": dict(info)})

    def match_events(self, match_id: str,
                     events: Sequence[tuple[dict[str, Any] | None, str | None]]) -> None:
        """Record and publish the public events of one step, in order, with
        one timestamp: ``(public form, its JSON text or None)``; a caller
        that has encoded the event already passes the text along, and may
        leave the form None when nobody watches the match."""
        live = self._live.get(match_id)
        if live is None:
            # An event before match_started is a server bug; keep going but say so.
            log.warning("live_event_for_unknown_match", match=match_id)
            self.match_started(match_id, {})
            live = self._live[match_id]
        at = self._clock()
        texts, ats = live.texts, live.ats
        subs = self._subs.get(f"match:{match_id}")
        for data, text in events:
            seq = live.next_seq
            live.next_seq = seq + 1
            texts.append(_dumps(data) if text is None else text)
            ats.append(at)
            if subs:  # messages are built only for someone watching
                message = {"type": "event", "match": match_id, "seq": seq, "at": at, "data": data}
                for sub in subs:
                    sub.push(message)

    def match_ended(self, match_id: str, summary: dict[str, Any]) -> None:
        summary = dict(summary)
        if "aborted" in summary:  # spectators get the public reason only
            summary["aborted"] = public_abort_reason(summary["aborted"])
        live = self._live.pop(match_id, None)
        if live is not None:
            live.ended = True
            live.summary = dict(summary)
            self._ended[match_id] = live
            while len(self._ended) > self._limits.recently_ended:
                self._ended.popitem(last=False)
        message = {"type": "match_ended", "match": match_id, "summary": dict(summary)}
        self._publish(f"match:{match_id}", message)
        self._publish(MATCHES_CHANNEL, message)

    def standings_changed(self, scope: str) -> None:
        """``scope``: ``"ladder"`` or a tournament id."""
        message = {"type": "standings_changed", "scope": scope}
        self._publish(f"standings:{scope}", message)
        if scope != LADDER:
            self._publish(f"tournament:{scope}", message)

    def tournament_progress(self, tournament_id: str, done: int, total: int) -> None:
        message = {"type": "progress", "tournament": tournament_id, "done": done,
                   "total": total}
        self._publish(f"tournament:{tournament_id}", message)
        self._publish(TOURNAMENTS_CHANNEL, message)

    # -- reading --------------------------------------------------------------
    def live_matches(self) -> list[dict[str, Any]]:
        """Matches in progress, oldest first: ``{"id", "events", **info}``."""
        return [{**m.info, "id": m.match_id, "events": m.next_seq}
                for m in list(self._live.values())]

    def is_live(self, match_id: str) -> bool:
        return match_id in self._live

    def live_info(self, match_id: str) -> dict[str, Any] | None:
        live = self._live.get(match_id) or self._ended.get(match_id)
        if live is None:
            return None
        return {**live.info, "id": match_id, "ended": live.ended,
                "truncated": live.first_seq > 0}

    def public_log(self, match_id: str) -> list[dict[str, Any]] | None:
        """The public events the hub still holds (``{"seq", "at", "data"}``):
        all of them while the match is short, else the recent tail (see
        ``live_info(...)["truncated"]`` and :mod:`arena.live_history`); None
        if the hub does not know the match (never started here, or long over)."""
        live = self._live.get(match_id) or self._ended.get(match_id)
        if live is None:
            return None
        first = live.first_seq
        return [{"seq": first + i, "at": at, "data": json.loads(text)}
                for i, (at, text) in enumerate(zip(live.ats, live.texts))]

    @property
    def subscriber_count(self) -> int:
        return self._n_subs

    # -- subscribing (web side) -------------------------------------------------
    @contextlib.asynccontextmanager
    async def subscribe(self, channel: str, *more: str) -> AsyncIterator[Subscription]:
        """Receive every message published on the given channels.

        Raises :class:`HubFullError` beyond ``max_subscribers``."""
        if self._n_subs >= self._limits.subscribers:
            raise HubFullError(
                f"too many live viewers ({self._limits.subscribers}); retry later")
        channels = (channel, *more)
        sub = Subscription(channels, self._limits.queue)
        if self._closed:
            sub.close()
        for name in channels:
            self._subs.setdefault(name, set()).add(sub)
        self._n_subs += 1
        try:
            yield sub
        finally:
            self._n_subs -= 1
            for name in channels:
                subs = self._subs.get(name)
                if subs is not None:
                    subs.discard(sub)
                    if not subs:
                        del self._subs[name]

    def close(self) -> None:
        """End every subscription (server shutdown)."""
        self._closed = True
        for subs in self._subs.values():
            for sub in subs:
                sub.close()

    def _publish(self, channel: str, message: Message) -> None:
        for sub in self._subs.get(channel, ()):
            sub.push(message)


__all__ = ["HubFullError", "LiveHub", "Subscription", "LADDER", "MATCHES_CHANNEL",
           "TOURNAMENTS_CHANNEL", "public_abort_reason"]
