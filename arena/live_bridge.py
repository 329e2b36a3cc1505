"""Live events across arena nodes: this node's live hub, heard by the others.

Each node's :class:`arena.live.LiveHub` knows only the matches its own
tables play. A :class:`BridgedHub` is a hub that also hands every public
message (match started, public events, match ended, standings and progress)
to a :class:`LiveBridge`, which publishes them in bundles on one PostgreSQL
``LISTEN/NOTIFY`` channel (:mod:`arena.storage.notify`); the bridge of every
other node feeds what it hears into its own hub through the same hub
methods, so the web of any node shows the live matches of every node.

Only public forms travel (the hub never sees a hidden card). Notifications
are bundled every ``flush_s`` into payloads under PostgreSQL's 8000 bytes, so
a node sends a few notifications per tick, not one per decision.

A node that dies sends nothing more: each bridge publishes a heartbeat, and
the matches of a node unheard for ``stale_s`` are ended on the other hubs
("node stopped"). After the subscription lost its connection (PostgreSQL
restarted) events sent meanwhile are gone; the matches it shows carry on
with the events that follow.

The transport is pluggable (:class:`BridgeTransport`): PostgreSQL's
NOTIFY between nodes (:class:`PostgresTransport`, what a URL gives), or a
local one between the worker processes of one ``arena serve --workers N``
and their parent (``arena.server.workers``), where bundles may be bigger
and a worker only sends, the parent only hears.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any, Callable, Protocol

import structlog

from arena.storage.base import StorageError
from arena.storage.notify import MAX_PAYLOAD_BYTES, Notice, Resync, Subscription, publish
from arena.records import encode_record as _dumps  # the hub's own JSON form
from arena.live import LiveHub

log = structlog.get_logger("arena.live_bridge")

CHANNEL = "arena_live"
_BUNDLE_BYTES = MAX_PAYLOAD_BYTES - 200  # room for the envelope


class BridgedHub(LiveHub):
    """A LiveHub whose own public messages also go into ``outbox`` (for the
    bridge); messages of other nodes come in through :meth:`apply_remote`."""

    def __init__(self, *, publish_own: bool = True, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        # False: a hub that only hears (the parent of workers on SQLite):
        # nothing drains an outbox there, so none is kept.
        self.publish_own = publish_own
        self.outbox: list[dict[str, Any]] = []
        self.remote_matches: dict[str, str] = {}  # match id -> the node playing it

    def match_started(self, match_id: str, info: dict[str, Any]) -> None:
        super().match_started(match_id, info)
        if self.publish_own:
            self.outbox.append({"t": "start", "m": match_id, "info": dict(info)})

    def match_events(self, match_id: str,
                     events: Sequence[tuple[dict[str, Any] | None, str | None]]) -> None:
        super().match_events(match_id, events)
        if not self.publish_own or not events:
            return
        # The hub has just kept each event's JSON text at the end of the
        # match's log: taken from there, not encoded a second time (and not
        # from the caller's dicts, which it may reuse for the next step).
        live = self._live.get(match_id)
        if live is not None and len(live.texts) >= len(events):
            kept = live.texts
            texts = [kept[i] for i in range(-len(events), 0)]
        else:
            texts = [_dumps(data) if text is None else text for data, text in events]
        self.outbox.append({"t": "ev", "m": match_id, "j": texts})

    def match_ended(self, match_id: str, summary: dict[str, Any]) -> None:
        super().match_ended(match_id, summary)
        if self.publish_own:
            self.outbox.append({"t": "end", "m": match_id, "s": dict(summary)})

    def standings_changed(self, scope: str) -> None:
        super().standings_changed(scope)
        if self.publish_own:
            self.outbox.append({"t": "standings", "scope": scope})

    def tournament_progress(self, tournament_id: str, done: int, total: int) -> None:
        super().tournament_progress(tournament_id, done, total)
        if self.publish_own:
            self.outbox.append({"t": "progress", "tid": tournament_id, "done": done,
                                "total": total})

    def apply_remote(self, node: str, message: dict[str, Any], *, relay: bool = False) -> None:
        """Feed one message of ``node`` into this hub; ``relay`` also sends it
        on as this hub's own (a parent passing its workers' matches to the
        other nodes), else it is not sent on."""
        kind, match_id = message.get("t"), str(message.get("m", ""))
        if kind == "start":
            self.remote_matches[match_id] = node
            LiveHub.match_started(self, match_id, {**message.get("info", {}), "node": node})
        elif kind == "ev":
            if not self.is_live(match_id):  # joined mid-match: show it from here on
                self.remote_matches[match_id] = node
                LiveHub.match_started(self, match_id, {"node": node})
            texts = message.get("j", [])
            # Decoded only for someone watching the match now; the log keeps text.
            watched = bool(self._subs.get(f"match:{match_id}"))
            LiveHub.match_events(self, match_id,
                                 [(json.loads(text) if watched else None, text)
                                  for text in texts])
        elif kind == "end":
            self.remote_matches.pop(match_id, None)
            LiveHub.match_ended(self, match_id, message.get("s", {}))
        elif kind == "standings":
            LiveHub.standings_changed(self, message["scope"])
        elif kind == "progress":
            LiveHub.tournament_progress(self, message["tid"], message["done"], message["total"])
        else:
            return
        if relay and self.publish_own:
            if kind == "start":
                message = {**message, "info": {**message.get("info", {}), "node": node}}
            self.outbox.append(message)

    def end_matches_of(self, node: str, reason: str, *, relay: bool = False) -> list[str]:
        ended = [m for m, n in self.remote_matches.items() if n == node]
        for match_id in ended:
            del self.remote_matches[match_id]
            LiveHub.match_ended(self, match_id, {"aborted": reason})
            if relay and self.publish_own:
                self.outbox.append({"t": "end", "m": match_id, "s": {"aborted": reason}})
        return ended


def _size(message: dict[str, Any]) -> int:
    return len(json.dumps(message, separators=(",", ":"), allow_nan=False).encode())


def bundles(node: str, messages: list[dict[str, Any]], limit: int = _BUNDLE_BYTES,
            size_of: Callable[[dict[str, Any]], int] = _size) -> list[dict[str, Any]]:
    """Pack messages, in order, into payloads of at most ``limit`` bytes
    (default: one notification) as ``size_of`` counts them; an events
    message too big for one is split, and a single event that is still too
    big is left out (the live page skips it; the stored log has it)."""
    out: list[dict[str, Any]] = []
    current: list[dict[str, Any]] = []
    size = 0
    pending = list(reversed(messages))
    while pending:
        message = pending.pop()
        n = size_of(message)
        if n > limit:
            events = message.get("j") if message.get("t") == "ev" else None
            if events and len(events) > 1:
                half = len(events) // 2
                pending.append({**message, "j": events[half:]})
                pending.append({**message, "j": events[:half]})
            else:
                log.warning("live_message_too_large", match=message.get("m"), bytes=n)
            continue
        if size + n > limit and current:
            out.append({"n": node, "msgs": current})
            current, size = [], 0
        current.append(message)
        size += n + 1
    if current:
        out.append({"n": node, "msgs": current})
    return out


class BridgeTransport(Protocol):
    """How a :class:`LiveBridge` sends its bundles and hears other nodes'.

    ``publish`` raises :class:`~arena.storage.base.StorageError` when the
    bundles could not go out (they are dropped: the stored logs have them);
    ``incoming`` yields payloads ``{"n": node, "msgs": [...]}`` (and
    :class:`~arena.storage.notify.Resync` after a lost connection) until
    the transport is closed. ``sends``/``hears`` say which halves it has.
    """

    sends: bool
    hears: bool

    async def open(self, node: str) -> None: ...

    def pack(self, node: str, messages: list[dict[str, Any]]) -> list[dict[str, Any]]: ...

    async def publish(self, payloads: list[dict[str, Any]]) -> None: ...

    def incoming(self) -> AsyncIterator[Any]: ...

    async def ready(self) -> None: ...

    async def close(self) -> None: ...


class PostgresTransport:
    """NOTIFY on ``channel`` of the database at ``url``, on a store
    connection of the bridge's own; LISTEN on another."""

    sends = True
    hears = True

    def __init__(self, url: str, channel: str = CHANNEL) -> None:
        self.url = url
        self.channel = channel
        self._store: Any = None
        self._subscription = Subscription(url, channel)

    async def open(self, node: str) -> None:
        from arena.storage import open_store

        self._store = await asyncio.to_thread(open_store, self.url, node=node)

    def pack(self, node: str, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return bundles(node, messages)

    async def publish(self, payloads: list[dict[str, Any]]) -> None:
        if self._store is not None:
            await asyncio.to_thread(publish, self._store, self.channel, *payloads)

    async def incoming(self) -> AsyncIterator[Any]:
        async for item in self._subscription:
            yield item.data if isinstance(item, Notice) else item

    async def ready(self) -> None:
        await self._subscription.ready.wait()

    async def close(self) -> None:
        await self._subscription.close()
        store, self._store = self._store, None
        if store is not None:
            await asyncio.to_thread(store.close)


class LiveBridge:
    """Publishes ``hub``'s messages through ``transport`` (a PostgreSQL URL:
    its NOTIFY channel) and feeds other nodes' messages into ``hub``.

    ``relay`` (a parent that also has a PostgreSQL bridge): what this
    bridge hears is sent on by the hub as its own, so the other nodes see
    the matches of this node's workers too."""

    def __init__(self, hub: BridgedHub, transport: "str | BridgeTransport", node: str, *,
                 channel: str = CHANNEL, flush_s: float = 0.1, beat_s: float = 2.0,
                 stale_s: float = 10.0, relay: bool = False) -> None:
        self.hub = hub
        self.transport: BridgeTransport = (PostgresTransport(transport, channel)
                                           if isinstance(transport, str) else transport)
        self.node = node
        self.channel = channel
        self.flush_s = flush_s
        self.beat_s = beat_s
        self.stale_s = stale_s
        self.relay = relay
        self.sent = 0  # notifications published
        self.heard = 0  # messages of other nodes applied
        self.dropped = 0  # own messages lost while the database was unreachable
        self._failing = False
        self._tasks: list[asyncio.Task[None]] = []
        self._last_heard: dict[str, float] = {}

    async def start(self) -> None:
        await self.transport.open(self.node)
        if self.transport.hears:
            self._tasks.append(asyncio.create_task(self._listen()))
        if self.transport.sends:
            self._tasks.append(asyncio.create_task(self._send()))
        try:
            await asyncio.wait_for(self.transport.ready(), timeout=10)
        except TimeoutError:
            log.warning("live_bridge_not_listening", node=self.node)
        log.info("live_bridge_started", node=self.node, channel=self.channel)

    async def stop(self) -> None:
        if self.transport.sends:
            await self._flush()  # the last messages (match ended) still go out
        await self.transport.close()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []

    async def _send(self) -> None:
        last_beat = 0.0
        while True:
            await asyncio.sleep(self.flush_s)
            if time.monotonic() - last_beat >= self.beat_s:
                self.hub.outbox.append({"t": "beat"})
                last_beat = time.monotonic()
            await self._flush()
            self._sweep()

    async def _flush(self) -> None:
        messages, self.hub.outbox = self.hub.outbox, []
        if not messages:
            return
        payloads = self.transport.pack(self.node, messages)
        try:
            await self.transport.publish(payloads)
            self.sent += len(payloads)
        except StorageError as exc:
            # Live views of other nodes miss these; the stored logs have them.
            # Said once per outage, not at every tick.
            self.dropped += len(messages)
            if not self._failing:
                log.warning("live_bridge_publish_failed", node=self.node, error=str(exc))
            self._failing = True
            return
        if self._failing:
            log.info("live_bridge_publishing_again", node=self.node, dropped=self.dropped)
            self._failing = False

    async def _listen(self) -> None:
        sweeping = None if self.transport.sends else asyncio.create_task(self._sweep_often())
        try:
            async for item in self.transport.incoming():
                if isinstance(item, Resync):
                    log.info("live_bridge_resync", node=self.node)
                    continue
                self.heard_payload(item)
        finally:
            if sweeping is not None:
                sweeping.cancel()

    async def _sweep_often(self) -> None:
        while True:  # a bridge that only hears still ends the matches of a silent node
            await asyncio.sleep(self.flush_s)
            self._sweep()

    def heard_payload(self, data: Any) -> None:
        """Apply one payload ``{"n": node, "msgs": [...]}`` of another node."""
        if not isinstance(data, dict):
            return
        node = data.get("n")
        if not isinstance(node, str) or node == self.node:
            return
        self._last_heard[node] = time.monotonic()
        for message in data.get("msgs", []):
            try:
                self.hub.apply_remote(node, message, relay=self.relay)
                self.heard += 1
            except (KeyError, TypeError, AttributeError) as exc:
                log.warning("live_bridge_bad_message", node=node, error=str(exc))

    def node_gone(self, node: str, reason: str) -> list[str]:
        """End the live matches of ``node`` now (its process is known dead)."""
        self._last_heard.pop(node, None)
        return self.hub.end_matches_of(node, reason, relay=self.relay)

    def _sweep(self) -> None:
        now = time.monotonic()
        for node, at in list(self._last_heard.items()):
            if now - at > self.stale_s:
                del self._last_heard[node]
                ended = self.hub.end_matches_of(node, f"node {node} stopped",
                                                relay=self.relay)
                log.warning("live_node_silent", node=node, matches_ended=len(ended))
