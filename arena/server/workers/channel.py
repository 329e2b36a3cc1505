"""One message channel between the parent process and a worker: a Unix
``SOCK_SEQPACKET`` socket pair carrying msgpack maps, with file descriptors
riding along (``SCM_RIGHTS``) for the bot connections the parent hands over.

Sequenced packets keep message boundaries and tie each descriptor to its
message, so there is no framing to get wrong. Sending never blocks the
loop: what the socket does not take at once waits in a queue, flushed when
it is writable again.
"""

from __future__ import annotations

import asyncio
import collections
import os
import socket
from collections.abc import Callable
from typing import Any

import msgpack
import structlog

from protocol.codec import pack_msgpack

log = structlog.get_logger("arena.workers.channel")

# A message's largest size: a hello as read (at most 70,000 bytes) and a
# bundle of live events (packed to about half of this) fit; within a Unix
# socket's default send buffer (212,992 bytes on Linux), which bounds a
# sequenced packet.
MAX_MESSAGE_BYTES = 128 * 1024
_MAX_FDS = 4


class ChannelClosedError(Exception):
    """The process at the other end is gone (or closed its end)."""


def channel_pair() -> tuple[socket.socket, socket.socket]:
    """(parent end, worker end); the worker end is inheritable so that a
    child started with ``pass_fds`` gets it."""
    parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    child.set_inheritable(True)
    return parent, child


class Channel:
    """Messages in and out on one end of a :func:`channel_pair`.

    ``on_message(message, fds)`` gets every message with the descriptors
    that came with it (the receiver owns and must close them);
    ``on_closed()`` is called once when the other end is gone.
    """

    def __init__(self, sock: socket.socket, on_message: Callable[[dict[str, Any], list[int]], None],
                 on_closed: Callable[[], None] | None = None) -> None:
        self.sock = sock
        self.sock.setblocking(False)
        self._on_message = on_message
        self._on_closed = on_closed
        self._loop = asyncio.get_running_loop()
        self._queue: collections.deque[tuple[bytes, list[int]]] = collections.deque()
        self._writing = False
        self.closed = False
        self.sent = 0
        self.received = 0
        self._loop.add_reader(sock.fileno(), self._readable)

    def send(self, message: dict[str, Any], fds: list[int] | None = None) -> None:
        """Queue ``message`` (with ``fds``, closed here once sent). Raises
        :class:`ChannelClosedError` when the other end is gone."""
        if self.closed:
            for fd in fds or ():
                os.close(fd)
            raise ChannelClosedError("the other process closed its channel")
        data = pack_msgpack(message)
        if len(data) > MAX_MESSAGE_BYTES:
            for fd in fds or ():
                os.close(fd)
            raise ValueError(f"a channel message of {len(data)} bytes is over "
                             f"{MAX_MESSAGE_BYTES}; split it")
        self._queue.append((data, list(fds or ())))
        if not self._writing:
            self._flush()

    @property
    def queued(self) -> int:
        return len(self._queue)

    def _flush(self) -> None:
        while self._queue:
            data, fds = self._queue[0]
            try:
                if fds:
                    socket.send_fds(self.sock, [data], fds)
                else:
                    self.sock.send(data)
            except (BlockingIOError, InterruptedError):
                if not self._writing:
                    self._writing = True
                    self._loop.add_writer(self.sock.fileno(), self._flush)
                return
            except OSError:
                self._lost()
                return
            self._queue.popleft()
            self.sent += 1
            for fd in fds:
                os.close(fd)
        if self._writing:
            self._writing = False
            self._loop.remove_writer(self.sock.fileno())

    def _readable(self) -> None:
        while not self.closed:
            try:
                data, fds, _flags, _addr = socket.recv_fds(self.sock, MAX_MESSAGE_BYTES, _MAX_FDS)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                self._lost()
                return
            if not data:
                self._lost()
                return
            self.received += 1
            try:
                message = msgpack.unpackb(data, raw=False)
            except (ValueError, msgpack.UnpackException) as exc:
                log.warning("channel_bad_message", error=str(exc))
                for fd in fds:
                    os.close(fd)
                continue
            self._on_message(message, fds)

    def drain(self) -> None:
        """Take in at once what the other end sent before it went away: the
        loop may see a worker's exit before it reads the worker's last
        messages (a tournament worker's ``done``)."""
        self._readable()

    def _lost(self) -> None:
        if self.closed:
            return
        self.close()
        if self._on_closed is not None:
            self._on_closed()

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self._loop.remove_reader(self.sock.fileno())
        if self._writing:
            self._loop.remove_writer(self.sock.fileno())
        for _, fds in self._queue:
            for fd in fds:
                os.close(fd)
        self._queue.clear()
        self.sock.close()
