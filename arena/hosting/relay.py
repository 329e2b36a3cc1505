"""Inside a sandbox: plain TCP on 127.0.0.1 carried to the arena's Unix socket.

The sandbox has a network namespace of its own, so nothing outside is
reachable; the arena bind-mounts one Unix socket into it. This relay listens
on ``127.0.0.1:PORT`` inside the sandbox and forwards every connection to
that socket, so a hosted bot connects exactly as a remote bot does
(``ARENA_HOST``/``ARENA_PORT``). It starts the bot's command, forwards
SIGTERM to it and exits with its exit code.

Standard library only: it runs with ``python3 -I`` inside the sandbox.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import threading


def _pump(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for sock in (dst, src):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def _serve(listener: socket.socket, target: str) -> None:
    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            return
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            upstream.connect(target)
        except OSError:
            client.close()
            upstream.close()
            continue
        for a, b in ((client, upstream), (upstream, client)):
            threading.Thread(target=_pump, args=(a, b), daemon=True).start()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--to", required=True, help="the arena's Unix socket")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", args.port))
    listener.listen(16)
    threading.Thread(target=_serve, args=(listener, args.to), daemon=True).start()
    child = subprocess.Popen(command, stdin=subprocess.DEVNULL)
    signal.signal(signal.SIGTERM, lambda *_: child.terminate())
    code = child.wait()
    listener.close()
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main())
