"""Several ``arena serve`` nodes in one process on one store URL, and remote
bots connected to them: the set-up of the in-process node tests (and of
the challenge tests, which register and connect their bots the same way).

Each node is an :class:`arena.app.Arena` with its own store opened under
its node name, directing tournaments (``run_tournaments``) and seating any
bot (``open``), with no ladder matchmaking."""

from __future__ import annotations

import asyncio
import inspect
import random
import time
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

from arena.app import Arena
from arena.auth import hash_token
from arena.server.config import ServerConfig
from arena.server.server import ArenaServer
from arena.storage import open_store
from arena.storage.base import ScheduledMatch, Store, TournamentStatus
from arena.tournament.challenge import ChallengeLimits
from arena.tournament.config import TournamentConfig
from arena.tournament.runner import create_or_load
from arena.tournament.shared import QueueSettings, SharedTournamentRunner
from protocol.sdk.client import BotClient
from tests.tournament_run.helpers import new_server


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
    async with _started(Nodes(stores, [
            Arena(ServerConfig(port=0, http_port=0 if i in web else None, matchmaking=False,
                               open=True, run_tournaments=True, **config), store)
            for i, store in enumerate(stores)])) as nodes:
        yield nodes


@asynccontextmanager
async def challenge_nodes(url: str, bots: Sequence[str], limits: ChallengeLimits,
                          **config: Any) -> AsyncIterator[Nodes]:
    """Nodes ``node-a`` and ``node-b`` on the store at ``url``, serving
    challenges under ``limits`` and HTTP on a free port, with bots ``bots``
    registered first. ``config``: more ServerConfig fields. At the end every
    node is stopped and its store closed."""
    setup = open_store(url)
    add_bots(setup, bots)
    setup.close()
    stores = [open_store(url, node=name) for name in ("node-a", "node-b")]
    async with _started(Nodes(stores, [
            Arena(ServerConfig(port=0, http_port=0, matchmaking=False, **config), store,
                  challenges=limits) for store in stores])) as nodes:
        yield nodes


@asynccontextmanager
async def _started(nodes: Nodes) -> AsyncIterator[Nodes]:
    try:
        for arena in nodes.arenas:
            await arena.start()
        yield nodes
    finally:
        await nodes.stop()
        for store in nodes.stores:
            store.close()


def add_bots(store: Store, names: Iterable[str]) -> None:
    """Register bots ``names``, each with the token ``token-NAME``."""
    for name in names:
        store.add_bot(name, hash_token(f"token-{name}"))


def random_bot(port: int, name: str, seed: int, *, ladder: bool = False,
               threaded: bool = False, pause_s: float = 0.0) -> BotClient:
    """A remote bot (token ``token-NAME``) playing a random legal action;
    ``ladder``: open to the ladder and to challenges. ``pause_s`` before each
    action makes a slow player that keeps its match running (threaded: the
    pause is in the bot's own thread, not the event loop)."""
    rng = random.Random(seed)

    def choose(phase: Any, legal: list[Any], state: Any) -> Any:
        if pause_s:
            time.sleep(pause_s)
        return rng.choice(legal)

    return BotClient("127.0.0.1", port, f"token-{name}", name, choose, ladder=ladder,
                     reconnect=False, threaded=threaded)


async def until(check: Callable[[], Any], timeout_s: float = 120.0,
                every_s: float = 0.1) -> Any:
    """Poll ``check`` (plain or async) until it gives something true, and
    return that; a generous bound, for a loaded machine."""
    async with asyncio.timeout(timeout_s):
        while True:
            result = check()
            if inspect.isawaitable(result):
                result = await result
            if result:
                return result
            await asyncio.sleep(every_s)


async def create_tournament(nodes: Nodes, tournament_id: str, config: dict[str, Any],
                            admin_token: str, *, node: int = 0) -> dict[str, Any]:
    """Create the tournament ``config`` as ``tournament_id`` through node
    ``node``'s web app (started with ``web=...``), as the admin; the
    tournament the API answers with."""
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{nodes.web(node)}/api/tournaments",
                             params={"id": tournament_id}, json=config,
                             headers={"Authorization": f"Bearer {admin_token}"}) as r:
            assert r.status == 201, await r.text()
            return (await r.json())["tournament"]  # type: ignore[no-any-return]


async def paired(store: Store, tournament_id: str,
                 timeout_s: float = 30.0) -> list[ScheduledMatch]:
    """The tournament's schedule, once a director has written it (a Swiss
    round is paired when the tournament starts)."""
    schedule: list[ScheduledMatch] = await until(lambda: store.get_schedule(tournament_id),
                                                 timeout_s)
    return schedule


async def create_and_pair(nodes: Nodes, tournament_id: str, config: dict[str, Any],
                          admin_token: str, *, timeout_s: float = 30.0) -> list[ScheduledMatch]:
    """Create the tournament through node 0's web app and wait for its
    schedule: what it deals to whom, before any bot connects."""
    await create_tournament(nodes, tournament_id, config, admin_token)
    return await paired(nodes.stores[0], tournament_id, timeout_s)


async def until_finished(store: Store, tournament_id: str, timeout_s: float = 120.0) -> None:
    """Wait until the tournament is over (every slot played)."""
    await until(lambda: store.get_tournament(tournament_id).status
                is TournamentStatus.FINISHED, timeout_s)


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


@dataclass
class SharedNode:
    """One node's share of a tournament: its store (opened under the node's
    name), its started server and its runner, not yet run."""

    store: Store
    server: ArenaServer
    runner: SharedTournamentRunner


async def shared_node(location: str | Path, config: TournamentConfig, node: str, *,
                      lease_s: float = 5.0) -> SharedNode:
    store = open_store(location, node=node)
    record, _ = create_or_load(store, config)
    server = new_server(store)
    await server.start()
    return SharedNode(store, server, SharedTournamentRunner(
        server, config, record, queue=QueueSettings(node=node, lease_s=lease_s, poll_s=0.05)))


async def play_on_two_nodes(location: str | Path,
                            config: TournamentConfig) -> tuple[list[SharedNode], list[bool]]:
    """Nodes ``node-a`` and ``node-b`` play the tournament together until
    both runners return (what they return, in order); their servers are
    stopped, their stores left open for the checks (the test closes them)."""
    nodes = [await shared_node(location, config, name) for name in ("node-a", "node-b")]
    try:
        done = await asyncio.wait_for(asyncio.gather(*(n.runner.run() for n in nodes)), 150)
    finally:
        for node in nodes:
            await node.server.stop()
    return nodes, list(done)
