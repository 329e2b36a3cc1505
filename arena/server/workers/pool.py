"""The parent's side of the workers: start them, hand them connections,
hear their live messages and metrics, restart one that dies, stop them.

A worker that dies (killed, crashed) is restarted after a pause that
grows while it keeps dying young (0.2 s doubling to 5 s). Its live matches
are ended on the parent's hub at once; in the store they stay ``running``
until the restarted worker, opening the store under the same node name,
aborts them ("server restarted") -- never counted, as after any restart.
Finished matches were committed by the worker's store writer when they
finished, so none is lost.
"""

from __future__ import annotations

import asyncio
import functools
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import structlog

from arena.server.config import ServerConfig
from arena.server.workers.channel import Channel, ChannelClosedError, channel_pair
from arena.server.workers.child import config_to_wire
from arena.server.workers.live import ParentTransport
from arena.server.workers.metrics import CombinedMetrics

log = structlog.get_logger("arena.workers")

# A worker that lived this long before dying is restarted at once again.
_HEALTHY_AFTER_S = 10.0


class WorkerStartError(Exception):
    """A worker could not be started (it exited before it was ready)."""


@dataclass
class WorkerState:
    index: int
    node: str
    process: asyncio.subprocess.Process | None = None
    channel: Channel | None = None
    ready: bool = False
    ready_event: asyncio.Event = field(default_factory=asyncio.Event)
    # Set when this process is replaced by the next (a restart's spawn).
    replaced: asyncio.Event = field(default_factory=asyncio.Event)
    started_at: float = 0.0
    restarts: int = 0
    pause_s: float = 0.0
    watcher: asyncio.Task[None] | None = None
    handed: int = 0  # connections handed to it since it started
    # Its work is over (a tournament worker whose runner ended): the
    # ``done`` message it sent, and it is not restarted when it exits.
    result: dict[str, Any] | None = None

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None


def worker_node(base: str | None, index: int) -> str:
    """The store node name of worker ``index`` (``arena-w1``, ``node-1-w2``)."""
    return f"{base or 'arena'}-w{index}"


def unnamed_serve_base() -> str:
    """The worker-name base of an unnamed ``arena serve --workers``: its
    process id (``arena-4711-w1``). Two unnamed servers on one store must
    not claim the same worker names (a name belongs to one running
    process), and a dead server's worker names are free again for the
    restarted server's clean-up (arena/app_workers.py)."""
    return f"arena-{os.getpid()}"


class WorkerPool:
    """``count`` worker processes serving ``config`` (its bot settings; the
    workers listen on no public port, the parent hands them connections).

    ``child`` is the module each worker runs (``python -m child FD``) and
    ``init_extra`` what its ``init`` message carries besides: a tournament
    worker (arena/tournament/worker.py) is told which tournament to play.
    """

    def __init__(self, count: int, config: ServerConfig, *, node_base: str | None,
                 metrics: CombinedMetrics, live: ParentTransport,
                 on_gone: Callable[[str, str], Any], log_level: str = "info",
                 restart_pause_s: float = 0.2, max_pause_s: float = 5.0,
                 child: str = "arena.server.workers.child",
                 init_extra: dict[str, Any] | None = None) -> None:
        if count < 1:
            raise ValueError(f"--workers must be at least 1, got {count}")
        self.config = config
        self.metrics = metrics
        self.live = live
        self.on_gone = on_gone
        self.log_level = log_level
        self.restart_pause_s = restart_pause_s
        self.max_pause_s = max_pause_s
        self.child = child
        self.init_extra = dict(init_extra or {})
        self.all_done = asyncio.Event()
        self.workers = [WorkerState(index=i, node=worker_node(node_base, i))
                        for i in range(1, count + 1)]
        self.stopping = False
        self._restarts: set[asyncio.Task[None]] = set()

    # -- lifecycle ----------------------------------------------------------------
    async def start(self, timeout_s: float = 60.0) -> None:
        for state in self.workers:
            await self._spawn(state)
        try:
            async with asyncio.timeout(timeout_s):
                for state in self.workers:
                    await self._started(state)
        except TimeoutError:
            await self.stop()
            raise WorkerStartError(f"the workers were not ready within {timeout_s:g} s") from None
        except WorkerStartError:
            await self.stop()
            raise

    async def _started(self, state: WorkerState) -> None:
        """Wait until ``state``'s worker is ready. One that exits by itself
        first fails the start (a wrong setting would only fail again); one
        killed by a signal (an operator, the OOM killer) is being restarted
        like any worker that dies, and its next process is waited for."""
        while True:
            process, replaced = state.process, state.replaced
            await state.ready_event.wait()
            if state.ready:
                return
            code = process.returncode if process is not None else None
            if code is None or code >= 0:
                raise WorkerStartError(
                    f"worker {state.index} exited with code {code if code is not None else '?'} "
                    "before it was ready (its log lines above say why)")
            await replaced.wait()  # the restart's pause, then its new process

    async def _spawn(self, state: WorkerState) -> None:
        parent_end, child_end = channel_pair()
        try:
            state.process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", self.child, str(child_end.fileno()),
                pass_fds=(child_end.fileno(),), stdin=subprocess.DEVNULL)
        finally:
            child_end.close()
        state.ready = False
        state.ready_event = asyncio.Event()
        state.replaced.set()
        state.replaced = asyncio.Event()
        state.started_at = time.monotonic()
        state.handed = 0
        state.channel = Channel(parent_end, functools.partial(self._message, state))
        state.channel.send({**self.init_extra, "t": "init", "index": state.index,
                            "node": state.node, "log_level": self.log_level,
                            "config": config_to_wire(self.config)})
        state.watcher = asyncio.get_running_loop().create_task(self._watch(state))
        log.info("worker_starting", worker=state.index, pid=state.pid, node=state.node)

    async def _watch(self, state: WorkerState) -> None:
        assert state.process is not None
        code = await state.process.wait()
        state.ready = False
        state.ready_event.set()
        if state.channel is not None:
            state.channel.drain()  # its last messages, a ``done`` among them
            state.channel.close()
        self.metrics.worker_gone(state.index)
        reason = f"worker {state.index} stopped"
        self.on_gone(state.node, reason)
        if self.stopping:
            return
        if state.result is not None:
            log.info("worker_done", worker=state.index, code=code)
            return
        lived = time.monotonic() - state.started_at
        state.pause_s = (self.restart_pause_s if lived >= _HEALTHY_AFTER_S or not state.pause_s
                         else min(self.max_pause_s, state.pause_s * 2))
        log.warning("worker_died", worker=state.index, code=code, lived_s=round(lived, 1),
                    restart_in_s=state.pause_s)
        task = asyncio.get_running_loop().create_task(self._restart(state))
        self._restarts.add(task)
        task.add_done_callback(self._restarts.discard)

    async def _restart(self, state: WorkerState) -> None:
        await asyncio.sleep(state.pause_s)
        if self.stopping:
            return
        state.restarts += 1
        try:
            await self._spawn(state)
        except OSError as exc:
            log.error("worker_restart_failed", worker=state.index, error=str(exc))

    async def stop(self, timeout_s: float = 15.0) -> None:
        """Stop every worker cleanly (its matches aborted, its store flushed);
        one still running after ``timeout_s`` is killed."""
        self.stopping = True
        for task in list(self._restarts):
            task.cancel()
        running = [s for s in self.workers
                   if s.process is not None and s.process.returncode is None]
        for state in running:
            if state.result is not None:
                continue  # it said done and is stopping by itself: a signal now only races it
            try:
                if state.channel is None or state.channel.closed:
                    raise ChannelClosedError("no channel")
                state.channel.send({"t": "stop"})
            except ChannelClosedError:
                state.process.terminate()  # type: ignore[union-attr]
        watchers = [s.watcher for s in self.workers if s.watcher is not None]
        if watchers:
            done, pending = await asyncio.wait(watchers, timeout=timeout_s)
            for state in running:
                if state.process is not None and state.process.returncode is None:
                    log.warning("worker_killed", worker=state.index, after_s=timeout_s)
                    state.process.kill()
            if pending:
                await asyncio.wait(pending, timeout=5)
        log.info("workers_stopped", count=len(self.workers))

    # -- connections ------------------------------------------------------------
    def alive(self) -> list[bool]:
        return [state.ready for state in self.workers]

    def hand(self, position: int, sock: socket.socket, data: bytes) -> bool:
        """Give the accepted ``sock`` (with the ``data`` read from it) to the
        worker at ``position`` (0-based); False (the socket is still ours)
        when that worker cannot take it now."""
        state = self.workers[position]
        if not state.ready or state.channel is None or state.channel.closed:
            return False
        fd = os.dup(sock.fileno())  # ours is closed by the caller; the channel closes this one
        try:
            state.channel.send({"t": "conn", "data": data}, fds=[fd])
        except (ChannelClosedError, ValueError):  # the channel closed the descriptor
            return False
        state.handed += 1
        entry = self.metrics.workers.get(state.index)
        if entry is not None:  # counted here, not at the worker's next report
            entry["handed"] = state.handed
        sock.close()
        return True

    def broadcast(self, message: dict[str, Any]) -> None:
        """Send ``message`` to every worker that is up."""
        for state in self.workers:
            if state.ready and state.channel is not None and not state.channel.closed:
                try:
                    state.channel.send(message)
                except ChannelClosedError:
                    pass

    # -- from the workers -------------------------------------------------------
    def _message(self, state: WorkerState, message: dict[str, Any], fds: list[int]) -> None:
        for fd in fds:  # a worker never sends descriptors
            os.close(fd)
        kind = message.get("t")
        if kind == "live":
            self.live.deliver(message["p"])
        elif kind == "metrics":
            self._report(state, message.get("m", {}), message)
        elif kind == "ready":
            state.ready = True
            state.ready_event.set()
            self._report(state, {}, {"connections": 0})  # in the health JSON from now on
            log.info("worker_ready", worker=state.index, pid=message.get("pid"))
        elif kind == "done":
            state.result = dict(message)
            if all(w.result is not None for w in self.workers):
                self.all_done.set()

    def _report(self, state: WorkerState, snapshot: dict[str, Any],
                message: dict[str, Any]) -> None:
        self.metrics.worker_report(state.index, snapshot, {
            "node": state.node, "pid": state.pid, "restarts": state.restarts,
            "connections": message.get("connections"), "handed": state.handed,
            "store_healthy": message.get("store_healthy", True),
            "store_error": message.get("store_error")})
