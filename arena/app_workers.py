"""``arena serve --workers N``: the parent process of N bot workers.

The parent serves HTTP (web, API), runs what must be single -- the
tournament director, the hosted bots and their ladder -- on an arena of its
own (:class:`~arena.app.Arena`, its bot server on a private loopback port
and the hosted bots' Unix socket), and owns the public bot port, where it
routes each connection by its hello (``arena.server.workers.dispatch``):
to the worker its token belongs to, or, for the entrants of a tournament
the director plays (pending or running), to its own server, so that the
whole tournament is at one process's tables.

Each worker (``arena.server.workers.child``) runs lobby, tables, admission
and store writer on the shared store (SQLite in WAL mode from several
processes, or PostgreSQL) under its own node name. Its live matches reach
the parent's hub through a local bridge; on PostgreSQL with a node name
(several machines), the parent's hub also relays them to the other nodes.
Metrics are summed over the processes (``/api/health`` lists each worker).
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
import socket
from collections.abc import Callable
from typing import Any

import structlog

from arena.auth import hash_token
from arena.live_bridge import BridgedHub, LiveBridge
from arena.server.config import ServerConfig
from arena.server.server import ArenaServer
from arena.server.workers.dispatch import Dispatcher
from arena.server.workers.live import ParentTransport
from arena.server.workers.metrics import CombinedMetrics
from arena.server.workers.pool import WorkerPool, unnamed_serve_base
from arena.storage.base import MatchStatus, Store, StorageError, TournamentStatus
from arena.storage.node_lock import dead_nodes

log = structlog.get_logger("arena.app_workers")

_ACTIVE = (TournamentStatus.PENDING, TournamentStatus.RUNNING)


def tournament_entrants(store: Store) -> set[str]:
    """The remote entrants of the tournaments the director will play or
    plays now, and the bots of the open challenges (the challenge service
    runs in the parent too): their connections belong to the parent."""
    from arena.tournament.challenge import ChallengeView, is_challenge
    from arena.tournament.config import ConfigError, config_from_wire

    names: set[str] = set()
    for record in store.list_tournaments():
        if record.status not in _ACTIVE:
            continue
        if is_challenge(record):  # not a tournament file: its bots are named in it
            view = ChallengeView.of(record)
            names.update((view.challenger, *view.opponents))
            continue
        try:
            config = config_from_wire(record.config)
        except (ConfigError, ValueError, TypeError, KeyError):
            continue  # the director cancels it
        names.update(e.name for e in config.entrants if not e.local)
    return names


class ParentBots:
    """Says whether a hello is from a bot the parent keeps: a tournament
    entrant (from the entrants it re-reads every ``refresh_s``), a bot
    that opted in to the hosted ladder when it runs here, or one that opted
    in to playing people (a person's table may seat it)."""

    def __init__(self, store: Store, server: ArenaServer, *, open_names: bool,
                 ladder: bool = False, refresh_s: float = 0.5,
                 on_names: Callable[[set[str]], None] = lambda names: None) -> None:
        self.store = store
        self.server = server
        self.open_names = open_names
        self.ladder = ladder  # the hosted ladder runs here: bots that opt in to it stay
        self.refresh_s = refresh_s
        self.on_names = on_names  # told the names after every refresh that has some
        self.names: set[str] = set()
        self._task: asyncio.Task[None] | None = None

    def __call__(self, hello: dict[str, Any]) -> bool:
        if self.ladder and hello.get("ladder") is True:
            return True
        if hello.get("people") is True:  # people's tables are the parent's (it serves the web)
            return True
        names = self.names | self.server.lobby.reserved
        if not names:
            return False
        if self.open_names:
            return hello.get("name") in names
        try:
            record = self.store.find_bot_by_token_hash(hash_token(str(hello.get("token"))))
        except StorageError:
            return False
        return record is not None and not record.removed and record.name in names

    async def start(self) -> None:
        await self._refresh()
        self._task = asyncio.get_running_loop().create_task(self._refresh_often())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def _refresh(self) -> None:
        before = self.names
        try:
            self.names = await asyncio.to_thread(tournament_entrants, self.store)
        except StorageError as exc:
            log.warning("entrants_unreadable", error=str(exc))
            return
        if self.names or before:  # a bot that connected to a worker meanwhile is sent back
            self.on_names(self.names)

    async def _refresh_often(self) -> None:
        while True:
            await asyncio.sleep(self.refresh_s)
            await self._refresh()


# (config of the parent's own server, its hub, its metrics, the public bot
# port) -> the parent's arena.app.Arena, with the hosted bots if asked for.
ArenaFactory = Callable[[ServerConfig, BridgedHub, CombinedMetrics, int], Any]


_UNNAMED_WORKER = re.compile(r"arena-(\d+-)?w\d+")


def dead_unnamed_workers(store: Store) -> list[str]:
    """Nodes of unnamed servers' workers (``arena-PID-wN``, or an older
    arena's ``arena-wN``) that left matches ``running`` and whose process is
    gone (their name's lock is free): a live server's workers are left alone."""
    names = {m.node for m in store.list_matches(status=MatchStatus.RUNNING, limit=100_000)
             if m.node and _UNNAMED_WORKER.fullmatch(m.node)}
    return dead_nodes(store, names) if names else []


def former_worker_nodes(store: Store, base: str, count: int) -> set[str]:
    """Nodes of workers past ``count`` (a run with more workers before) that
    left matches ``running``: no worker of theirs starts to abort them."""
    prefix = f"{base}-w"
    nodes: set[str] = set()
    for match in store.list_matches(status=MatchStatus.RUNNING, limit=100_000):
        suffix = (match.node or "").removeprefix(prefix)
        if match.node and match.node.startswith(prefix) and suffix.isdigit() \
                and int(suffix) > count:
            nodes.add(match.node)
    return nodes


class WorkersArena:
    """The parent: its own arena (``make_arena``), the workers, the public
    bot port."""

    def __init__(self, config: ServerConfig, store: Store, workers: int,
                 make_arena: ArenaFactory, *, node_hub: BridgedHub | None = None,
                 hosted_ladder: bool = False, log_level: str = "info") -> None:
        self.config = config
        self.store = store
        self.metrics = CombinedMetrics()
        # With a PostgreSQL bridge to other nodes (node_hub), the parent's hub
        # relays its workers' matches there; else it only hears them.
        self.hub = node_hub if node_hub is not None else BridgedHub(publish_own=False)
        self.dispatcher = Dispatcher(config.host, config.port, backlog=config.listen_backlog,
                                     hello_timeout_s=config.hello_timeout_s,
                                     alive=self._alive, for_parent=self._for_parent,
                                     to_worker=self._to_worker, to_parent=self._to_parent,
                                     open_names=config.open)
        public_port = self.dispatcher.bind()  # fails now if the port is taken
        own = dataclasses.replace(config, host="127.0.0.1", port=0)
        self.arena = make_arena(own, self.hub, self.metrics, public_port)
        self.live = ParentTransport()
        self.bridge = LiveBridge(self.hub, self.live, store.node or "arena",
                                 relay=node_hub is not None, stale_s=10.0)
        worker_config = dataclasses.replace(config, host="127.0.0.1", port=0, http_port=None,
                                            run_tournaments=False, admin_token=None,
                                            listen=False)
        self.pool = WorkerPool(workers, worker_config,
                               node_base=store.node or unnamed_serve_base(),
                               metrics=self.metrics, live=self.live,
                               on_gone=self.bridge.node_gone, log_level=log_level)
        if self.arena.web is not None:  # a removed bot's connections close everywhere
            self.arena.web.disconnects.append(self._disconnect_in_workers)
        self.parent_bots = ParentBots(
            store, self.arena.server, open_names=config.open, ladder=hosted_ladder,
            on_names=lambda names: self.pool.broadcast({"t": "reserve",
                                                        "names": sorted(names)}))

    @property
    def port(self) -> int | None:
        return self.dispatcher.port

    @property
    def http_port(self) -> int | None:
        return self.arena.http_port

    def _disconnect_in_workers(self, bot: str, reason: str, keep_token: str | None) -> int:
        """Tell every worker to close ``bot``'s connections (it answers nothing:
        the count is of this process's, none)."""
        self.pool.broadcast({"t": "disconnect", "bot": bot, "reason": reason, "keep": keep_token})
        return 0

    def _alive(self) -> list[bool]:
        return self.pool.alive()

    def _for_parent(self, hello: dict[str, Any]) -> bool:
        return self.parent_bots(hello)

    def _to_worker(self, position: int, sock: socket.socket, data: bytes) -> bool:
        return self.pool.hand(position, sock, data)

    async def _to_parent(self, sock: socket.socket, data: bytes) -> None:
        await self.arena.server.adopt_connection(sock, data)

    async def start(self) -> None:
        await self.arena.start()  # the parent aborts only its own (node-less) matches
        writer = self.arena.server.writer
        if self.store.node is not None:
            for node in await writer.call(former_worker_nodes, self.store, self.store.node,
                                          len(self.pool.workers)):
                await writer.call(self.store.abort_unfinished, "server restarted", node=node)
        else:  # an unnamed server's dead workers (named after a parent that is gone)
            for node in await writer.call(dead_unnamed_workers, self.store):
                await writer.call(self.store.abort_unfinished, "server restarted", node=node)
        await self.bridge.start()
        await self.parent_bots.start()
        try:
            await self.pool.start()
        except BaseException:
            await self.dispatcher.stop()  # the bound port is given back too
            await self.parent_bots.stop()
            await self.bridge.stop()
            await self.arena.stop()
            raise
        await self.dispatcher.start()

    async def stop(self) -> None:
        await self.dispatcher.stop()
        await self.pool.stop()
        await self.parent_bots.stop()
        await self.arena.stop()
        await self.bridge.stop()

    async def __aenter__(self) -> "WorkersArena":
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()
