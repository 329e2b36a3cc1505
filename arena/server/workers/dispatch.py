"""The public bot port under ``arena serve --workers N``: accept, read the
hello, hand the connection to the process that will play the bot.

Why the parent routes instead of letting the kernel spread connections
(``SO_REUSEPORT``): a table lives in one process, and the protocol gives a
bot that reconnects mid-match its seat back (same token). The kernel's
spread would send half of the reconnects to a worker that has no such
table. Routing by the bot's key -- its token; with ``--any-token`` the
name its hello gives, since there a name belongs to the first token that
used it -- keeps every connection of a bot on one worker, so reconnects
find their seat, a name cannot be taken twice on two workers, and (with
registered tokens) the per-token connection cap holds for the whole
server. It also lets the parent keep the bots a tournament it directs is
waiting for.

The parent does little per connection: one read of the hello and one
``sendmsg`` with the socket; the workers do everything else. A first
message that is not a readable hello (bad frame, wrong type, silence until
the hello deadline, a hang-up) goes to the parent's own server, which
answers it as any server does.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import socket
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import structlog

from protocol.codec import Decoder

log = structlog.get_logger("arena.workers.dispatch")

_MAX_HELLO_BYTES = 70_000  # a hello frame is at most 64 KiB


def worker_for_key(key: str, count: int) -> int:
    """The worker (0-based) the connections of a bot with this key go to
    while it is up."""
    digest = hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big") % count


def route_key(hello: dict[str, Any], open_names: bool) -> str:
    """What identifies the bot of ``hello``: with open names the name it
    asks for (a name is one bot whichever token claims it), else its token."""
    name = hello.get("name")
    if open_names and isinstance(name, str) and name:
        return "name:" + name
    return "token:" + str(hello.get("token"))


def route(hello: dict[str, Any] | None, alive: Sequence[bool],
          for_parent: Callable[[dict[str, Any]], bool], *, open_names: bool = False) -> int | None:
    """Where a connection whose first message is ``hello`` goes: a worker
    (0-based), or None for the parent's own server (not a usable hello, a
    bot the parent keeps, or no worker up). A bot's worker that is down
    (being restarted) passes its new connections to the next one up."""
    if hello is None or hello.get("type") != "hello" or not isinstance(hello.get("token"), str):
        return None
    if for_parent(hello):
        return None
    count = len(alive)
    first = worker_for_key(route_key(hello, open_names), count)
    for step in range(count):
        position = (first + step) % count
        if alive[position]:
            return position
    return None


class Dispatcher:
    """Listens on the public bot port and routes each connection.

    ``to_worker(position, sock, data)`` returns False when that worker could
    not take it; ``to_parent(sock, data)`` gives it to the parent's server.
    """

    def __init__(self, host: str, port: int, *, backlog: int, hello_timeout_s: float,
                 alive: Callable[[], Sequence[bool]],
                 for_parent: Callable[[dict[str, Any]], bool],
                 to_worker: Callable[[int, socket.socket, bytes], bool],
                 to_parent: Callable[[socket.socket, bytes], Awaitable[None]],
                 open_names: bool = False) -> None:
        self.host = host
        self.open_names = open_names
        self.requested_port = port
        self.backlog = backlog
        self.hello_timeout_s = hello_timeout_s
        self._alive = alive
        self._for_parent = for_parent
        self._to_worker = to_worker
        self._to_parent = to_parent
        self._listener: socket.socket | None = None
        self._accepting: asyncio.Task[None] | None = None
        self._reading: set[asyncio.Task[None]] = set()
        self.port: int | None = None
        self.routed: dict[str, int] = {"worker": 0, "parent": 0}

    def bind(self) -> int:
        """Bind and listen now (connections wait in the backlog until
        :meth:`start`); the port, resolved if 0 was asked for."""
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        listener = socket.socket(family, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            listener.bind((self.host, self.requested_port))
        except OSError:
            listener.close()
            raise
        listener.listen(self.backlog)
        listener.setblocking(False)
        self._listener = listener
        self.port = int(listener.getsockname()[1])
        return self.port

    async def start(self) -> None:
        if self._listener is None:
            self.bind()
        self._accepting = asyncio.get_running_loop().create_task(self._accept())

    async def stop(self) -> None:
        if self._accepting is not None:
            self._accepting.cancel()
            await asyncio.gather(self._accepting, return_exceptions=True)
            self._accepting = None
        for task in list(self._reading):
            task.cancel()
        await asyncio.gather(*self._reading, return_exceptions=True)
        if self._listener is not None:
            self._listener.close()
            self._listener = None

    async def _accept(self) -> None:
        loop = asyncio.get_running_loop()
        assert self._listener is not None
        while True:
            try:
                sock, _ = await loop.sock_accept(self._listener)
            except OSError as exc:  # e.g. out of descriptors: say so, keep serving
                log.warning("accept_failed", error=str(exc))
                await asyncio.sleep(0.1)
                continue
            sock.setblocking(False)
            task = loop.create_task(self._dispatch(sock))
            self._reading.add(task)
            task.add_done_callback(self._reading.discard)

    async def _dispatch(self, sock: socket.socket) -> None:
        try:
            data, hello = await self._read_hello(sock)
        except asyncio.CancelledError:
            sock.close()
            raise
        position = route(hello, self._alive(), self._for_parent, open_names=self.open_names)
        if position is not None and self._to_worker(position, sock, data):
            self.routed["worker"] += 1
            return
        self.routed["parent"] += 1
        try:
            await self._to_parent(sock, data)
        except OSError as exc:  # the bot hung up meanwhile
            log.info("handover_failed", error=str(exc))
            sock.close()

    async def _read_hello(self, sock: socket.socket) -> tuple[bytes, dict[str, Any] | None]:
        """The bytes read until the first message is whole (and that
        message), or what came before the deadline, a hang-up or a bad frame
        (and None)."""
        loop = asyncio.get_running_loop()
        decoder = Decoder.for_server()
        received = bytearray()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self.hello_timeout_s):
                while len(received) < _MAX_HELLO_BYTES:
                    try:
                        chunk = await loop.sock_recv(sock, _MAX_HELLO_BYTES - len(received))
                    except OSError:
                        break
                    if not chunk:
                        break
                    received += chunk
                    try:
                        decoder.receive_data(chunk)
                        message = decoder.next_message()
                    except Exception:  # the server the parent hands it to names the fault
                        break
                    if message is not None:
                        return bytes(received), message
        return bytes(received), None
