"""The start check: a built version must say hello before it is ``ready``.

A build can succeed while the program it made cannot run where it plays:
a Go binary whose runtime the play sandbox refuses, a missing shared
library, a script with a typo on the line that imports the SDK. So before
a version is ``ready`` it is started once, in the sandbox and with the
limits it will play under, and must send its ``hello`` within
:data:`START_CHECK_SECONDS`. The arena is stood in for by a Unix socket that
reads one message and closes: nothing is played and nothing is stored.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import structlog

from protocol.codec import Decoder
from protocol.errors import FrameError

from arena.hosting.hosted import sandbox_spec
from arena.hosting.local_build import START_CHECK_SECONDS
from arena.hosting.sandbox import Sandbox, SandboxLimits
from arena.hosting.versions import BotVersion

log = structlog.get_logger("arena.hosting.start_check")

STDERR_TAIL_BYTES = 4096  # what of its stderr the build log shows


@dataclass(frozen=True)
class StartCheck:
    said_hello: bool
    reason: str | None  # why it is not ready, in a sentence
    stderr_tail: bytes = b""


async def check_start(version: BotVersion, app: Path, *,
                      limits: SandboxLimits = SandboxLimits(),
                      timeout_s: float = START_CHECK_SECONDS) -> StartCheck:
    """Start ``version`` (its files at ``app``) and wait for its hello."""
    directory = Path(tempfile.mkdtemp(prefix="arena-check-"))  # short: socket paths are short
    directory.chmod(0o755)
    path = directory / "a.sock"
    hello = asyncio.Event()
    bad: list[str] = []

    async def first_message(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        decoder = Decoder.for_server()
        try:
            while not hello.is_set():
                data = await reader.read(65536)
                if not data:
                    return
                for message in decoder.feed(data):
                    if message.get("type") == "hello":
                        hello.set()
                    else:
                        bad.append(f"its first message was {message.get('type')!r}, not hello")
                    return
        except FrameError as exc:
            bad.append(f"it sent bytes that are not a protocol frame ({exc})")
        finally:
            writer.close()

    server = await asyncio.start_unix_server(first_message, path=str(path))
    os.chmod(path, 0o666)  # the sandbox's own user id connects
    stderr_path = directory / "stderr.log"
    sandbox: Sandbox | None = None
    try:
        spec = sandbox_spec(version, app, path, "start-check", limits)
        with open(stderr_path, "wb") as stderr:
            sandbox = Sandbox(spec, stderr=stderr.fileno())
            await sandbox.start()
        reason = await _wait(sandbox, hello, bad, timeout_s)
    finally:
        if sandbox is not None:
            await sandbox.stop()
        server.close()
        tail = await asyncio.to_thread(_tail, stderr_path)
        shutil.rmtree(directory, ignore_errors=True)
    log.info("start_check", bot=version.bot, version=version.version, ok=reason is None,
             reason=reason)
    return StartCheck(reason is None, reason, tail)


async def _wait(sandbox: Sandbox, hello: asyncio.Event, bad: list[str],
                timeout_s: float) -> str | None:
    assert sandbox.process is not None
    said = asyncio.ensure_future(hello.wait())
    exited = asyncio.ensure_future(sandbox.process.wait())
    try:
        await asyncio.wait([said, exited], timeout=timeout_s,
                           return_when=asyncio.FIRST_COMPLETED)
    finally:
        said.cancel()
        exited.cancel()
    if hello.is_set():
        return None
    if bad:
        return f"the bot did not start: {bad[0]}"
    code = sandbox.process.returncode
    if code is not None:
        return (f"the bot did not start: it exited with code {code} before saying hello "
                "(its stderr is at the end of the build log)")
    return (f"the bot did not start: it did not say hello within {timeout_s:g} s "
            "(its stderr is at the end of the build log)")


def _tail(path: Path) -> bytes:
    try:
        with open(path, "rb") as handle:
            handle.seek(max(0, os.fstat(handle.fileno()).st_size - STDERR_TAIL_BYTES))
            return handle.read()
    except OSError:
        return b""
