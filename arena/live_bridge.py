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
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

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

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.outbox: list[dict[str, Any]] = []
        self.remote_matches: dict[str, str] = {}  # match id -> the node playing it

    def match_started(self, match_id: str, info: dict[str, Any]) -> None:
        super().match_started(match_id, info)
        self.outbox.append({"t": "start", "m": match_id, "info": dict(info)})

    def match_events(self, match_id: str,
                     events: list[tuple[dict[str, Any], str | None]]) -> None:
        super().match_events(match_id, events)
        # Encoded now: the caller may reuse its dicts for the next step.
        self.outbox.append({"t": "ev", "m": match_id,
                            "j": [_dumps(data) if text is None else text
                                  for data, text in events]})

    def match_ended(self, match_id: str, summary: dict[str, Any]) -> None:
        super().match_ended(match_id, summary)
        self.outbox.append({"t": "end", "m": match_id, "s": dict(summary)})

    def standings_changed(self, scope: str) -> None:
        super().standings_changed(scope)
        self.outbox.append({"t": "standings", "scope": scope})

    def tournament_progress(self, tournament_id: str, done: int, total: int) -> None:
        super().tournament_progress(tournament_id, done, total)
        self.outbox.append({"t": "progress", "tid": tournament_id, "done": done,
                            "total": total})

    def apply_remote(self, node: str, message: dict[str, Any]) -> None:
        """Feed one message of ``node`` into this hub (not sent on again)."""
        kind, match_id = message.get("t"), message.get("m")
        if kind == "start":
            self.remote_matches[match_id] = node
            LiveHub.match_started(self, match_id, {**message.get("info", {}), "node": node})
        elif kind == "ev":
            if not self.is_live(match_id):  # joined mid-match: show it from here on
                self.remote_matches[match_id] = node
                LiveHub.match_started(self, match_id, {"node": node})
            LiveHub.match_events(self, match_id,
                                 [(json.loads(text), text) for text in message.get("j", [])])
        elif kind == "end":
            self.remote_matches.pop(match_id, None)
            LiveHub.match_ended(self, match_id, message.get("s", {}))
        elif kind == "standings":
            LiveHub.standings_changed(self, message["scope"])
        elif kind == "progress":
            LiveHub.tournament_progress(self, message["tid"], message["done"], message["total"])

    def end_matches_of(self, node: str, reason: str) -> list[str]:
        ended = [m for m, n in self.remote_matches.items() if n == node]
        for match_id in ended:
            del self.remote_matches[match_id]
            LiveHub.match_ended(self, match_id, {"aborted": reason})
        return ended


def _size(message: dict[str, Any]) -> int:
    return len(json.dumps(message, separators=(",", ":"), allow_nan=False).encode())


def bundles(node: str, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Pack messages, in order, into payloads that fit one notification;
    an events message too big for one is split, and a single event that
    is still too big is left out (the live page skips it; the stored log
    has it)."""
    out: list[dict[str, Any]] = []
    current: list[dict[str, Any]] = []
    size = 0
    pending = list(reversed(messages))
    while pending:
        message = pending.pop()
        n = _size(message)
        if n > _BUNDLE_BYTES:
            events = message.get("j") if message.get("t") == "ev" else None
            if events and len(events) > 1:
                half = len(events) // 2
                pending.append({**message, "j": events[half:]})
                pending.append({**message, "j": events[:half]})
            else:
                log.warning("live_message_too_large", match=message.get("m"), bytes=n)
            continue
        if size + n > _BUNDLE_BYTES and current:
            out.append({"n": node, "msgs": current})
            current, size = [], 0
        current.append(message)
        size += n + 1
    if current:
        out.append({"n": node, "msgs": current})
    return out


class LiveBridge:
    """Publishes ``hub``'s messages on ``url``'s NOTIFY channel and feeds
    other nodes' messages into ``hub``."""

    def __init__(self, hub: BridgedHub, url: str, node: str, *, channel: str = CHANNEL,
                 flush_s: float = 0.1, beat_s: float = 2.0, stale_s: float = 10.0) -> None:
        self.hub = hub
        self.url = url
        self.node = node
        self.channel = channel
        self.flush_s = flush_s
        self.beat_s = beat_s
        self.stale_s = stale_s
        self.sent = 0  # notifications published
        self.heard = 0  # messages of other nodes applied
        self.dropped = 0  # own messages lost while the database was unreachable
        self._failing = False
        self._store: Any = None
        self._subscription = Subscription(url, channel)
        self._tasks: list[asyncio.Task[None]] = []
        self._last_heard: dict[str, float] = {}

    async def start(self) -> None:
        from arena.storage import open_store

        self._store = await asyncio.to_thread(open_store, self.url, node=self.node)
        self._tasks = [asyncio.create_task(self._listen()), asyncio.create_task(self._send())]
        try:
            await asyncio.wait_for(self._subscription.ready.wait(), timeout=10)
        except TimeoutError:
            log.warning("live_bridge_not_listening", node=self.node)
        log.info("live_bridge_started", node=self.node, channel=self.channel)

    async def stop(self) -> None:
        await self._flush()  # the last messages (match ended) still go out
        await self._subscription.close()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []
        store, self._store = self._store, None
        if store is not None:
            await asyncio.to_thread(store.close)

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
        if not messages or self._store is None:
            return
        payloads = bundles(self.node, messages)
        try:
            await asyncio.to_thread(publish, self._store, self.channel, *payloads)
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
        async for item in self._subscription:
            if isinstance(item, Resync):
                log.info("live_bridge_resync", node=self.node)
                continue
            self._heard(item)

    def _heard(self, notice: Notice) -> None:
        data = notice.data
        if not isinstance(data, dict):
            return
        node = data.get("n")
        if not isinstance(node, str) or node == self.node:
            return
        self._last_heard[node] = time.monotonic()
        for message in data.get("msgs", []):
            try:
                self.hub.apply_remote(node, message)
                self.heard += 1
            except (KeyError, TypeError, AttributeError) as exc:
                log.warning("live_bridge_bad_message", node=node, error=str(exc))

    def _sweep(self) -> None:
        now = time.monotonic()
        for node, at in list(self._last_heard.items()):
            if now - at > self.stale_s:
                del self._last_heard[node]
                ended = self.hub.end_matches_of(node, f"node {node} stopped")
                log.warning("live_node_silent", node=node, matches_ended=len(ended))
