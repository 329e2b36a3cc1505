"""Every public event of a running match, for a viewer who comes late.

The live hub holds only a recent tail of each match of this node; the
older events are rebuilt from the store's records (:mod:`arena.live_history`)
and joined to the tail by seq. A replay costs milliseconds of CPU, so the
last one of each recently viewed match is kept and serves every viewer
until the hub's tail has moved past its end.
"""

from __future__ import annotations

import asyncio
import collections
from typing import Any, Awaitable, Callable

import structlog

from arena.live import LiveHub
from arena.live_history import HistoryError, join, public_history
from arena.storage.base import MatchRecord, Store

log = structlog.get_logger(__name__)

Wire = dict[str, Any]

# The store's writer may be up to a batch (about a second) behind the hub:
# when this node's writer is at hand it is asked to write what it holds at
# once; otherwise (or still behind) tried this often, this far apart, before
# the viewer gets the hub's tail alone (marked ``truncated``).
HISTORY_TRIES = 30
HISTORY_RETRY_S = 0.05
CACHED_HISTORIES = 8  # running matches whose rebuilt events are kept


class LiveEvents:
    """The public events of running matches: the store's up to the hub's tail."""

    def __init__(self, store: Store, hub: LiveHub, run: Callable[..., Awaitable[Any]], *,
                 catch_up: Callable[[], Awaitable[None]] | None = None) -> None:
        self.store = store
        self.hub = hub
        self._catch_up = catch_up  # the writer's flush: the store gets what it holds
        self._run = run  # a blocking call on a read thread
        self._histories: collections.OrderedDict[str, list[Wire]] = collections.OrderedDict()

    async def all_of(self, record: MatchRecord) -> list[Wire] | None:
        """Every public event of the match so far, in seq order, each once.

        None if the hub does not hold the match, it is played on another
        node (the hub's numbering may not match the store's), the store
        stays behind the tail's start, or its log does not rebuild."""
        for attempt in range(HISTORY_TRIES):
            info = self.hub.live_info(record.id)
            if info is None or info.get("node") is not None:
                return None
            cached = self._histories.get(record.id)
            tail = self.hub.public_log(record.id) or []
            joined = None if cached is None else join(cached, tail)
            if joined is not None:
                return joined
            stored = await self._run(self.store.get_events, record.id)
            try:
                history = await self._run(public_history, record.game, record.rules,
                                          [(e.seq, e.at, e.data) for e in stored])
            except HistoryError as exc:
                log.warning("live_history_not_rebuilt", match=record.id, error=str(exc))
                return None
            self._histories[record.id] = history
            self._histories.move_to_end(record.id)
            while len(self._histories) > CACHED_HISTORIES:
                self._histories.popitem(last=False)
            now_tail = self.hub.public_log(record.id)  # now: it moved on during the reads
            if now_tail is None:
                return None
            joined = join(history, now_tail)
            if joined is not None:
                return joined
            if attempt == 0 and self._catch_up is not None:
                await self._catch_up()
            else:
                await asyncio.sleep(HISTORY_RETRY_S)  # the store's writer is catching up
        return None
