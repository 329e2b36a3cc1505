"""Each hosted run's own Unix socket into the arena, with limits of its own.

Every run gets a socket of its own (handed to its sandbox's relay as a
descriptor), so no bot can reach another's. The arena counts
connections by peer address, and every Unix socket peer has the same empty
one; here each connection's transport names its bot instead
(``hosted:<bot>``), so the server's per-address limit counts each hosted bot
apart, and a run holds at most ``MAX_CONNECTIONS`` at once (a bot needs one;
a few for reconnecting): one bot holding its slots shuts nobody else out.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

MAX_CONNECTIONS = 8  # per hosted run


class Listener(Protocol):
    """``ArenaServer.start_unix``."""

    async def __call__(self, path: str | os.PathLike[str], wrap: Any = None) -> Any: ...


@dataclass
class Slots:
    address: str
    limit: int = MAX_CONNECTIONS
    open: int = 0
    refused: int = 0


class _NamedTransport:
    """The real transport, but its peer is the hosted bot's name."""

    def __init__(self, transport: asyncio.Transport, address: str) -> None:
        self._transport = transport
        self._peer = (address, 0)
        # The calls a connection makes per message, bound once.
        self.write = transport.write
        self.is_closing = transport.is_closing
        self.get_write_buffer_size = transport.get_write_buffer_size

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        if name == "peername":
            return self._peer
        return self._transport.get_extra_info(name, default)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class _Slot(asyncio.Protocol):
    """Stands between one connection and its transport: counts it in its run's slots."""

    def __init__(self, conn: asyncio.Protocol, slots: Slots) -> None:
        self.conn = conn
        self.slots = slots
        self.counted = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        if self.slots.open >= self.slots.limit:
            self.slots.refused += 1
            transport.close()  # past its slots: closed before a byte is read
            return
        self.slots.open += 1
        self.counted = True
        self.conn.connection_made(_NamedTransport(transport, self.slots.address))  # type: ignore[arg-type]

    def data_received(self, data: bytes) -> None:
        if self.counted:
            self.conn.data_received(data)

    def eof_received(self) -> bool | None:
        return self.conn.eof_received() if self.counted else None

    def connection_lost(self, exc: Exception | None) -> None:
        if self.counted:
            self.counted = False
            self.slots.open -= 1
            self.conn.connection_lost(exc)

    def pause_writing(self) -> None:
        if self.counted:
            self.conn.pause_writing()

    def resume_writing(self) -> None:
        if self.counted:
            self.conn.resume_writing()


class RunSocket:
    """``await RunSocket.open(listen, path, bot)``; ``close()`` when the run ends."""

    def __init__(self, path: Path, server: Any, slots: Slots) -> None:
        self.path = path
        self._server = server
        self.slots = slots

    @classmethod
    async def open(cls, listen: Listener, path: Path, bot: str) -> "RunSocket":
        slots = Slots(address=f"hosted:{bot}")
        server = await listen(path, lambda conn: _Slot(conn, slots))
        return cls(path, server, slots)

    def close(self) -> None:
        self._server.close()
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass
