"""Inside a sandbox: plain TCP on 127.0.0.1 carried to the arena's Unix socket.

The sandbox has a network namespace of its own, so nothing outside is
reachable; the arena hands it one Unix socket, as a descriptor it reaches
at ``$ARENA_SOCKET`` (``/proc/self/fd/N``; the variable is not passed on to
the bot, nor is the descriptor). This relay listens
on ``127.0.0.1:PORT`` inside the sandbox and forwards every connection to
that socket, so a hosted bot connects exactly as a remote bot does
(``ARENA_HOST``/``ARENA_PORT``). It starts the bot's command, forwards
SIGTERM to it and exits with its exit code.

It also keeps the bot's log within bounds: the bot's stderr (and, for a
build, its stdout too) comes through a pipe, and only the first
``--log-cap`` bytes reach the relay's own stderr (the file its owner reads);
the rest is read and dropped, so a noisy bot neither blocks nor fills the
disk. The relay makes itself non-dumpable, so the bot (same user id) cannot
reach that file through ``/proc``. Without ``--port`` nothing listens (builds).

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


def _write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data):]


def _capped_copy(src: int, dst: int, cap: int) -> None:
    """Copy ``src`` to ``dst`` up to ``cap`` bytes, then read and drop the rest."""
    written = 0
    try:
        while chunk := os.read(src, 65536):
            if written < cap:
                part = chunk[: cap - written]
                _write_all(dst, part)
                written += len(part)
                if written >= cap:
                    _write_all(dst, f"\n[log cut at {cap} bytes; the rest was not kept]\n".encode())
    except OSError:
        pass


def _not_dumpable() -> None:
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0
    except (OSError, AttributeError):
        pass


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=None)
    parser.add_argument("--to", default=os.environ.pop("ARENA_SOCKET", None),
                        help="the arena's Unix socket (default: $ARENA_SOCKET)")
    parser.add_argument("--log-cap", type=int, default=1 << 20, help="bytes of log kept")
    parser.add_argument("--build", action="store_true", help="keep stdout too (a build's output)")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    _not_dumpable()
    listener = None
    if args.port is not None:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", args.port))
        listener.listen(16)
        threading.Thread(target=_serve, args=(listener, args.to), daemon=True).start()
    read_end, write_end = os.pipe()
    child = subprocess.Popen(command, stdin=subprocess.DEVNULL,
                             stdout=write_end if args.build else subprocess.DEVNULL,
                             stderr=write_end)
    os.close(write_end)
    copier = threading.Thread(target=_capped_copy, args=(read_end, 2, args.log_cap), daemon=True)
    copier.start()
    signal.signal(signal.SIGTERM, lambda *_: child.terminate())
    code = child.wait()
    copier.join(5.0)  # what the bot wrote last (children it left may hold the pipe)
    if listener is not None:
        listener.close()
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main())
