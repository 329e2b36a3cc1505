"""A stand-in worker for the pool's own tests: it says ``ready`` once the
file named in its init message exists (so a test can act while it is still
starting), exits with the code named there instead if one is, and stops
when told to or when the parent goes."""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from pathlib import Path
from typing import Any

from arena.server.workers.channel import Channel
from arena.server.workers.child import _read_init


async def run(sock: socket.socket, init: dict[str, Any]) -> int:
    if init.get("exit_code") is not None:
        return int(init["exit_code"])
    stopping = asyncio.Event()

    def heard(message: dict[str, Any], fds: list[int]) -> None:
        for fd in fds:
            os.close(fd)
        if message.get("t") == "stop":
            stopping.set()

    channel = Channel(sock, heard, on_closed=stopping.set)
    gate = Path(init["gate"])
    while not gate.exists() and not stopping.is_set():
        await asyncio.sleep(0.02)
    channel.send({"t": "ready", "pid": os.getpid()})
    await stopping.wait()
    channel.close()
    return 0


def main(argv: list[str]) -> int:
    sock = socket.socket(fileno=int(argv[0]))
    sock.setblocking(True)
    return asyncio.run(run(sock, _read_init(sock)))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
