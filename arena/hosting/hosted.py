"""A hosted bot playing: its active version started in a sandbox for a match.

Each run gets a Unix socket of its own into the arena (:mod:`.run_socket`,
``ArenaServer.start_unix``, limits per bot); it is handed to the
sandbox's relay as a descriptor (no mount names its folder) and the relay
makes it ``127.0.0.1:7000`` inside. The bot gets the same four
variables as any bot the arena starts (``ARENA_HOST``, ``ARENA_PORT``,
``ARENA_TOKEN``, ``ARENA_NAME``) and from then on is an ordinary bot. Its
stderr goes to a file while it runs and to the store when it stops, where
its owner can read it from any node; nobody else sees it.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import structlog

from arena.hosting.presets import interpreter_command
from arena.hosting.errors import HostingError
from arena.hosting.local_build import ensure_built
from arena.hosting.logs import LOG_CAP_BYTES, cut_to_cap
from arena.hosting.run_socket import Listener, RunSocket
from arena.hosting.seats import SeatKeeper, SeatSettings
from arena.hosting.sandbox import (Mount, Sandbox, SandboxLimits, SandboxSpec, python_mounts,
                                   sandbox_python)
from arena.hosting.versions import BotVersion, BuildStatus, VersionStore

log = structlog.get_logger("arena.hosting")

INSIDE_PORT = 7000
# After its match a run plays no other (ARENA_MAX_MATCHES=1: the server says
# bye after match_end); it gets this long to write its last lines and leave
# before it is stopped, so its saved stderr runs to the end of the match.
LEAVE_GRACE_S = 2.0
_RELAY = Path(__file__).with_name("relay.py")


@dataclass
class HostedRun:
    """One start of one version (usually for one match)."""

    version: BotVersion
    sandbox: Sandbox
    stderr_path: Path
    started_at: float
    token: str  # valid while this run lives, revoked when it stops
    socket: RunSocket

    @property
    def alive(self) -> bool:
        proc = self.sandbox.process
        return proc is not None and proc.returncode is None


def sandbox_spec(version: BotVersion, app: Path, socket_path: Path, token: str,
                 limits: SandboxLimits, name: str | None = None) -> SandboxSpec:
    relay = [sandbox_python(), "-I", "/arena/relay.py", "--port", str(INSIDE_PORT),
             "--log-cap", str(LOG_CAP_BYTES), "--"]
    return SandboxSpec(
        command=[*relay, *interpreter_command(version.run)], app_dir=app,
        env={"ARENA_HOST": "127.0.0.1", "ARENA_PORT": str(INSIDE_PORT), "ARENA_TOKEN": token,
             "ARENA_NAME": name or version.bot, "ARENA_MAX_MATCHES": "1", "PYTHONUNBUFFERED": "1"},
        mounts=[*python_mounts(), Mount(_RELAY, "/arena/relay.py")],
        limits=limits, socket=socket_path)


class TokenIssuer(Protocol):
    """The server's one-process tokens (``ArenaServer.local_tokens``)."""

    def issue(self, name: str) -> str: ...
    def revoke(self, token: str) -> None: ...
    def revoke_bot(self, name: str) -> int: ...


class HostedBots:
    """Starts and stops sandboxed runs of hosted bots for one arena server.

    ``tokens`` is the server's one-process token issuer: hosted bots
    authenticate like the bots the arena starts itself, each run with a token
    of its own that is revoked when the run stops. Removing or rotating a bot
    (``VersionStore.retire``) stops its run and revokes every token it holds.
    """

    def __init__(self, versions: VersionStore, socket_dir: Path, listen: Listener,
                 tokens: TokenIssuer, limits: SandboxLimits = SandboxLimits(),
                 seats: SeatSettings = SeatSettings()) -> None:
        self.versions = versions
        self.socket_dir = socket_dir  # each run's socket is made here
        self.listen = listen
        self.tokens = tokens
        self.limits = limits
        self.runs: dict[str, HostedRun] = {}
        # Tournament entrants' runs take their bot's seat of the store, as
        # ladder tables do: one bot's sandboxes never run on two nodes at once.
        self.entrant_seats = SeatKeeper(versions, lease_s=seats.lease_s,
                                        give_up_s=seats.give_up_s, on_lost=self._seat_lost)
        self.seat_wait_s = seats.entrant_wait_s
        versions.on_retire.append(self.retire)

    def close(self) -> None:
        """No longer told about removals (the service stopped)."""
        if self.retire in self.versions.on_retire:
            self.versions.on_retire.remove(self.retire)

    def seated_here(self) -> set[str]:
        """Bots whose seat this node holds for tournament entrants (the
        ladder's own tables are its ``playing``)."""
        return self.entrant_seats.bots()

    async def _seat_lost(self, bot: str) -> None:
        for seat in [s for s, run in self.runs.items() if run.version.bot == bot]:
            await self.stop(seat)

    def ready_bots(self) -> list[BotVersion]:
        """Reads files: the ladder calls it off the event loop."""
        return self.versions.ready_bots()

    async def retire(self, bot: str, removed: bool) -> None:
        """Stop ``bot``'s runs (its own and its versions seated under other
        names) and revoke every token it holds, now."""
        for seat in [s for s, run in self.runs.items() if run.version.bot == bot or s == bot]:
            await self.stop(seat)
        revoked = self.tokens.revoke_bot(bot)
        log.info("hosted_bot_retired", bot=bot, removed=removed, tokens=revoked)

    async def start(self, bot: str, version_number: int | None = None, *,
                    take_seat: bool = False) -> HostedRun:
        """Start ``bot``'s active version (``version_number``: only if it is
        that one, as a validation match needs). ``take_seat``: the run takes
        the bot's seat of the store itself, given back when it stops (a
        challenge match; the ladder seats its tables itself); raises
        :class:`SeatTakenError` while another node has the bot seated."""
        if await asyncio.to_thread(self.versions.is_removed, bot):
            raise HostingError(f"bot {bot!r} was removed; it no longer plays")
        version = await asyncio.to_thread(self.versions.active, bot)
        if version is None or version.status is not BuildStatus.READY:
            raise HostingError(f"bot {bot!r} has no ready version to play")
        if version_number is not None and version.version != version_number:
            raise HostingError(f"bot {bot!r} v{version_number} no longer is the version that plays")
        if not take_seat:
            return await self._run(version, bot)
        await self.entrant_seats.take(bot, bot)
        try:
            return await self._run(version, bot)
        except BaseException:
            await self.entrant_seats.give_back(bot, bot)
            raise

    async def start_version(self, bot: str, version_number: int, seat: str) -> HostedRun:
        """Start version ``version_number`` of ``bot``, whichever version is
        active, under the name ``seat`` (a tournament seats two versions of
        one bot side by side, e.g. ``mybot.v6`` and ``mybot.v7``). The
        bot's seat of the store is taken first (waiting up to
        ``seat_wait_s`` for a ladder match elsewhere to end) and given back
        when the last of its runs here stops."""
        if await asyncio.to_thread(self.versions.is_removed, bot):
            raise HostingError(f"bot {bot!r} was removed; it no longer plays")
        version = await asyncio.to_thread(self.versions.get, bot, version_number)
        if version.status is not BuildStatus.READY:
            raise HostingError(f"{bot} v{version_number} is {version.status.value}, not ready "
                               f"to play{': ' + version.reason if version.reason else ''}")
        await self.entrant_seats.take(bot, seat, wait_s=self.seat_wait_s)
        try:
            return await self._run(version, seat)
        except BaseException:
            await self.entrant_seats.give_back(bot, seat)
            raise

    async def _run(self, version: BotVersion, seat: str) -> HostedRun:
        if seat in self.runs and self.runs[seat].alive:
            return self.runs[seat]
        # Built on another node of the store: built here first, from the upload.
        app = await ensure_built(self.versions, version)
        run_id = time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)
        stderr_path = await asyncio.to_thread(self.versions.stderr_path, version, f"run-{run_id}")
        token = self.tokens.issue(seat)
        sock = await RunSocket.open(self.listen, self.socket_dir / f"{secrets.token_hex(4)}.sock",
                                  seat)  # short: a Unix socket path has at most 107 bytes
        spec = sandbox_spec(version, app, sock.path, token, self.limits, name=seat)
        try:
            with open(stderr_path, "wb") as stderr:
                sandbox = Sandbox(spec, stderr=stderr.fileno())
                await sandbox.start()
        except BaseException:
            self.tokens.revoke(token)
            sock.close()
            raise
        run = self.runs[seat] = HostedRun(version, sandbox, stderr_path, time.time(), token, sock)
        log.info("hosted_bot_started", bot=version.bot, seat=seat, version=version.version,
                 pid=sandbox.pid)
        return run

    async def stop(self, bot: str, match_id: str | None = None) -> None:
        run = self.runs.pop(bot, None)
        if run is None:
            return
        self.tokens.revoke(run.token)  # first: nothing it kept may say hello again
        run.socket.close()  # no new connection; the one it has stays open
        proc = run.sandbox.process
        if match_id is not None and proc is not None and proc.returncode is None:
            try:
                async with asyncio.timeout(LEAVE_GRACE_S):
                    await proc.wait()
            except TimeoutError:
                pass  # it did not leave by itself: stopped below
        await run.sandbox.stop()
        await self.entrant_seats.give_back(run.version.bot, bot)
        await asyncio.to_thread(self._keep_log, run, match_id)
        log.info("hosted_bot_stopped", bot=bot, version=run.version.version, match=match_id)

    def _keep_log(self, run: HostedRun, match_id: str | None) -> None:
        """(a worker thread) The run's stderr, cut to the cap, goes to the
        store under its match (or its run, if it played none), where every
        node serves it; the store keeps the version's newest logs only."""
        cut_to_cap(run.stderr_path)
        name = match_id or run.stderr_path.stem
        try:
            data = run.stderr_path.read_bytes()
        except FileNotFoundError:
            data = b""
        self.versions.keep_stderr(run.version.bot, run.version.version, name, data)
        if match_id is not None:
            self.versions.note_match(run.version.bot, run.version.version, match_id)
        run.stderr_path.unlink(missing_ok=True)

    async def stop_all(self) -> None:
        for bot in list(self.runs):
            await self.stop(bot)
        await self.entrant_seats.close()
