"""One worker process of ``arena serve --workers N``.

Started by the parent (:mod:`.pool`) as ``python -m arena.server.workers.child
FD`` with its end of a channel (:mod:`.channel`) as descriptor FD. The
first message says what to run (``init``: the server settings, the node
name, log level); then the parent hands it bot connections (``conn``, the
socket and the bytes the parent read from it: the hello) and finally
``stop``. The worker runs an :class:`~arena.server.server.ArenaServer` of
its own on the shared store under its own node name, so that on start it
aborts only its own unfinished matches ("server restarted", after a crash),
and sends back:

* ``ready`` once it takes connections,
* ``live``: bundles of its live hub's public messages (arena/live_bridge.py),
* ``metrics``: its counters, every half second.

``reserve`` names the bots a tournament of the parent waits for: the worker
seats them no more and closes their idle connections with the reason
(``rate_limited``, ``retry_after_s`` 0), so that they connect again, now to
the parent.

It stops cleanly (running matches aborted as at any shutdown, the store
flushed) on ``stop``, on SIGTERM, and when the parent is gone (the channel
closes), so no worker outlives its parent. SIGINT is left to the parent: a
Ctrl-C reaches the whole process group, and the parent stops the workers
in order.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import signal
import socket
import sys
from typing import Any

import msgpack
import structlog

from arena.collector import tune_for_serving
from arena.live_bridge import BridgedHub, LiveBridge
from arena.logs import configure_logging, divert_logs
from arena.server.config import ServerConfig
from arena.server.lobby import ClaimTimeoutError
from arena.server.reveal_courier import RevealPoll
from arena.server.revoke import TokenSweep
from arena.server.server import ArenaServer
from arena.server.workers.channel import MAX_MESSAGE_BYTES, Channel, ChannelClosedError
from arena.server.workers.live import WorkerTransport
from protocol.errors import ErrorCode

log = structlog.get_logger("arena.workers.child")

METRICS_EVERY_S = 0.5
LIVE_FLUSH_S = 0.1
BEAT_S = 1.0


def config_to_wire(config: ServerConfig) -> dict[str, Any]:
    """The settings a worker needs, as plain data (no admin token: a worker
    serves no HTTP)."""
    return {**dataclasses.asdict(config), "admin_token": None}


def config_from_wire(data: dict[str, Any]) -> ServerConfig:
    known = {f.name for f in dataclasses.fields(ServerConfig)}
    return ServerConfig(**{k: v for k, v in data.items() if k in known})


class Worker:
    """The worker's server, bridge and channel, from start to stop."""

    def __init__(self, sock: socket.socket, init: dict[str, Any]) -> None:
        self.sock = sock
        self.index = int(init["index"])
        self.node = str(init["node"])
        self.config = config_from_wire(init["config"])
        self.stopping = asyncio.Event()
        self._tasks: set[asyncio.Task[None]] = set()
        self._reserved: set[str] = set()

    async def run(self) -> int:
        from arena.storage import open_store

        store = self.store = open_store(self.config.db, node=self.node)
        hub = BridgedHub()
        # The parent's director sends owed reveals to the parent's bots only:
        # this worker's bots get theirs from the worker itself.
        server = ArenaServer(self.config, store, hub=hub, services=[TokenSweep(), RevealPoll()])
        self.server = server
        self.channel = Channel(self.sock, self._message, on_closed=self.stopping.set)
        bridge = LiveBridge(hub, WorkerTransport(self.channel), self.node,
                            flush_s=LIVE_FLUSH_S, beat_s=BEAT_S)
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGTERM, self.stopping.set)
        try:
            await server.start()
            await bridge.start()
            self._send({"t": "ready", "pid": os.getpid(), "port": server.port})
            reporter = loop.create_task(self._report())
            playing = loop.create_task(self.play())
            log.info("worker_started", worker=self.index, node=self.node, pid=os.getpid())
            await self.stopping.wait()
            # Stopping from here on: a later SIGTERM would only hit the loop
            # while it closes (its wakeup pipe already gone).
            loop.remove_signal_handler(signal.SIGTERM)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            reporter.cancel()
            playing.cancel()
            await asyncio.gather(playing, return_exceptions=True)
            for task in list(self._tasks):
                task.cancel()
            await server.stop()
            await bridge.stop()  # after the server: the aborted matches' ends go out
            self._report_once()
            for _ in range(100):  # what the socket did not take at once, for up to 1 s
                if not self.channel.queued or self.channel.closed:
                    break
                await asyncio.sleep(0.01)
        finally:
            self.channel.close()
            store.close()  # a locked closing "PRAGMA optimize" is the store's to tolerate
        log.info("worker_stopped", worker=self.index)
        return 0

    async def play(self) -> None:
        """Work of its own beside serving what the parent hands over (none
        here; a tournament worker plays its tournament, then stops)."""
        return None

    def _send(self, message: dict[str, Any]) -> None:
        try:
            self.channel.send(message)
        except ChannelClosedError:
            self.stopping.set()

    def _message(self, message: dict[str, Any], fds: list[int]) -> None:
        kind = message.get("t")
        if kind == "conn" and fds:
            sock = socket.socket(fileno=fds[0])
            for extra in fds[1:]:
                os.close(extra)
            task = asyncio.get_running_loop().create_task(
                self._adopt(sock, bytes(message.get("data", b""))))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
            return
        for fd in fds:
            os.close(fd)
        if kind == "stop":
            self.stopping.set()
        elif kind == "reserve":
            self._reserve(set(message.get("names", ())))
        elif kind == "disconnect":  # the bot was removed or its token replaced
            self.server.disconnect_bot(str(message["bot"]), str(message["reason"]),
                                       message.get("keep"))

    def _reserve(self, names: set[str]) -> None:
        """The bots a tournament of the parent waits for: not seated here any
        more, and their idle connections closed with the reason, so that
        they connect again and the parent keeps them."""
        self.server.release_names(self._reserved - names)
        self.server.reserve_names(names)
        self._reserved = names
        for name in names:
            task = asyncio.get_running_loop().create_task(self._send_back(name))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _send_back(self, name: str) -> None:
        while True:
            try:
                conn = await self.server.lobby.claim(name, 0)
            except ClaimTimeoutError:
                return
            log.info("sent_to_parent", bot=name, conn=conn.id)
            conn.fail(ErrorCode.RATE_LIMITED,
                      f"a tournament of this server waits for {name!r}, and another process "
                      "of the server plays it; connect again (your seat there is kept)",
                      retry_after_s=0)

    async def _adopt(self, sock: socket.socket, data: bytes) -> None:
        if self.server.stopping:
            sock.close()
            return
        try:
            await self.server.adopt_connection(sock, data)
        except OSError as exc:  # the bot hung up meanwhile
            log.info("adopt_failed", error=str(exc))
            sock.close()

    async def _report(self) -> None:
        while True:
            await asyncio.sleep(METRICS_EVERY_S)
            self._report_once()

    def _report_once(self) -> None:
        status = self.server.status()
        writer = self.server.writer
        self._send({"t": "metrics", "m": self.server.metrics.snapshot(),
                    "tables": status["tables"], "connections": status["connections"],
                    "store_healthy": bool(getattr(writer, "healthy", True)),
                    "store_error": getattr(writer, "last_error", None)})


def _read_init(sock: socket.socket) -> dict[str, Any]:
    data = sock.recv(MAX_MESSAGE_BYTES)
    if not data:
        raise SystemExit("arena worker: the parent closed the channel before saying what to run")
    init = msgpack.unpackb(data, raw=False)
    if init.get("t") != "init":
        raise SystemExit(f"arena worker: expected the init message, got {init.get('t')!r}")
    return init


def main(argv: list[str], worker: type[Worker] = Worker,
         usage: str = "python -m arena.server.workers.child FD (started by arena serve "
                      "--workers N)") -> int:
    if len(argv) != 1 or not argv[0].isdigit():
        print(f"usage: {usage}", file=sys.stderr)
        return 2
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent's Ctrl-C stops us in order
    sock = socket.socket(fileno=int(argv[0]))
    sock.setblocking(True)
    init = _read_init(sock)
    configure_logging(init.get("log_level", "info"))
    structlog.contextvars.bind_contextvars(worker=int(init["index"]))
    log_file = init.get("log_file")
    tune_for_serving()  # a worker plays its share of the tables
    with divert_logs(log_file) if log_file else contextlib.nullcontext():
        return asyncio.run(worker(sock, init).run())


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
