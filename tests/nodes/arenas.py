"""Several ``arena serve`` nodes in one process on one store URL, and remote
bots connected to them: the set-up of the in-process node tests.

Each node is an :class:`arena.app.Arena` with its own store opened under
its node name, directing tournaments (``run_tournaments``) and seating any
bot (``open``), with no ladder matchmaking."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from arena.app import Arena
from arena.server.config import ServerConfig
from arena.storage import open_store
from arena.storage.base import Store
from protocol.sdk.client import BotClient


@dataclass
class Nodes:
    stores: list[Store]
    arenas: list[Arena]
    _stopped: bool = False

    def web(self, i: int) -> str:
        """The base URL of node ``i``'s web app (started with ``web=...``)."""
        return f"http://127.0.0.1:{self.arenas[i].http_port}"

    async def stop(self) -> None:
        """Stop every node (their stores stay open for the checks after)."""
        if not self._stopped:
            self._stopped = True
            for arena in self.arenas:
                await arena.stop()


@asynccontextmanager
async def arena_nodes(url: str, names: Sequence[str], *, web: Sequence[int] = (),
                      **config: Any) -> AsyncIterator[Nodes]:
    """Nodes ``names`` on the store at ``url``, started; the ones whose index
    is in ``web`` serve HTTP on a free port. ``config``: more ServerConfig
    fields, the same on every node. At the end every node is stopped and
    its store closed."""
    stores = [open_store(url, node=name) for name in names]
    nodes = Nodes(stores, [
        Arena(ServerConfig(port=0, http_port=0 if i in web else None, matchmaking=False,
                           open=True, run_tournaments=True, **config), store)
        for i, store in enumerate(stores)])
    try:
        for arena in nodes.arenas:
            await arena.start()
        yield nodes
    finally:
        await nodes.stop()
        for store in stores:
            store.close()


def random_bot(port: int, name: str, seed: int) -> BotClient:
    """A remote bot (token ``token-NAME``) playing a random legal action."""
    rng = random.Random(seed)
    return BotClient("127.0.0.1", port, f"token-{name}", name,
                     lambda phase, legal, state: rng.choice(legal),
                     reconnect=False, threaded=False)


@dataclass
class Bots:
    """Bots running as tasks until :meth:`stop`."""

    bots: list[BotClient] = field(default_factory=list)
    tasks: list[asyncio.Task[Any]] = field(default_factory=list)

    @classmethod
    def start(cls, bots: list[BotClient]) -> Bots:
        return cls(bots, [asyncio.create_task(bot.run()) for bot in bots])

    async def stop(self) -> None:
        for bot in self.bots:
            await bot.stop()
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)


def pair_on(port: int, names: Sequence[str] = ("north", "south")) -> Bots:
    """The tournaments' remote entrants, connected to the node at ``port``
    (seeds 0, 1, ... in order)."""
    return Bots.start([random_bot(port, name, i) for i, name in enumerate(names)])
