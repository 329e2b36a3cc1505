"""Bots the arena starts itself, as subprocesses that connect over TCP.

The launch contract (protocol/README.md, "Bots the arena starts"):

* environment: only ``ARENA_HOST``, ``ARENA_PORT``, ``ARENA_TOKEN``,
  ``ARENA_NAME``, ``PYTHONUNBUFFERED=1`` and, when the arena has them,
  ``PASSED_ENV`` (``PATH``, ``HOME``, locale...). Nothing else of the
  arena's environment (an admin token, for one) reaches a bot.
* working directory: the entrant's ``cwd``; stdin: ``/dev/null``.
* stdout and stderr: one pipe, kept per bot and per match in
  ``bot-logs/<bot>/<match>.log`` (``lobby.log`` while the bot is not seated).
* its own session and process group, and (Linux) ``PR_SET_PDEATHSIG``:
  the bot is killed when the arena dies, even by SIGKILL; helpers it forked
  are killed with its process group when it stops, or at the next start of
  the arena if it died unexpectedly.
* stopping: SIGTERM to the process group, SIGKILL ``STOP_GRACE_S`` later.
* a bot that exits while wanted is restarted (backoff up to 5 s).
"""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
import signal
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import structlog

from arena.server.errors import ServerError
from arena.storage.private import open_private_append, private_dir

log = structlog.get_logger("arena.local_bots")

PASSED_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "PYTHONPATH")
STOP_GRACE_S = 3.0
MAX_LOG_BYTES = 1_000_000  # per file: a chatty bot cannot fill the disk
LOBBY_LOG = "lobby"
PROCESS_FILE = "process"
FAILING_AFTER_EXITS = 3  # exits in a row without playing: the bot counts as failing
LAST_OUTPUT_S = 1.0  # how long what a bot wrote before it exited is still read


def process_file(node: str | None) -> str:
    """The name of a bot's process record for the arena process of ``node``:
    several nodes (the workers of one tournament) on one machine share the
    bots' log folder, and each reaps only the leftovers of its own."""
    return PROCESS_FILE if node is None else f"{PROCESS_FILE}.{node}"


class _BotProtocol(asyncio.subprocess.SubprocessStreamProtocol):
    """asyncio's protocol for a process with streams, plus an event set the
    moment the process exits. ``Process.wait()`` also waits for the output
    pipe to close, which a helper that left the bot's process group (a
    daemon) may hold open for good; the bot's own exit is what counts."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=2**16, loop=loop)
        self.exited = asyncio.Event()

    def process_exited(self) -> None:
        super().process_exited()
        self.exited.set()


# Runs in the child before the bot: ask the kernel to SIGKILL it when its
# parent (the arena) dies, bail out if the arena is already gone, then exec
# the bot (the death signal survives exec).
_LAUNCHER = (
    "import ctypes, os, signal, sys\n"
    "ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))\n"
    "if os.getppid() != int(sys.argv[1]):\n"
    "    os._exit(70)\n"
    "os.execvp(sys.argv[2], sys.argv[2:])\n"
)


class EntrantCommandError(ServerError):
    """Some local bot commands cannot be started; one line per problem."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


def resolve_command(command: list[str]) -> list[str]:
    """``python``/``python3`` mean this arena's interpreter, so Python bots
    find the SDK wherever the arena was installed."""
    if command and command[0] in ("python", "python3"):
        return [sys.executable, *command[1:]]
    return list(command)


# Interpreters whose first plain argument is a script file: options that
# run code without a script (``python -m``, ``node -e``), and options that
# take the next word as their value (so it is not the script).
_INTERPRETERS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "python": (frozenset({"-m", "-c"}), frozenset({"-W", "-X"})),
    "node": (frozenset({"-e", "--eval", "-p", "--print", "-i", "--interactive"}),
             frozenset({"-r", "--require", "--import", "--loader"})),
    "ruby": (frozenset({"-e"}), frozenset({"-r", "-I"})),
    "perl": (frozenset({"-e", "-E"}), frozenset({"-I", "-M"})),
    "bash": (frozenset({"-c"}), frozenset({"-o"})),
    "sh": (frozenset({"-c"}), frozenset({"-o"})),
}


def script_of(command: list[str]) -> str | None:
    """The script file an interpreter command runs (``python bot.py`` ->
    ``bot.py``), or None when it runs none or is not an interpreter we know."""
    program = Path(command[0]).name if command else ""
    family = "python" if program.startswith("python") or program == Path(sys.executable).name else \
        "node" if program in ("node", "nodejs") else program
    if family not in _INTERPRETERS:
        return None
    inline, valued = _INTERPRETERS[family]
    words = iter(command[1:])
    for word in words:
        if word in inline or word == "-":
            return None
        if word in valued:
            next(words, None)
        elif not word.startswith("-"):
            return word
    return None


def command_problem(name: str, command: list[str], cwd: Path | None, who: str = "entrant") -> str | None:
    """Why ``command`` cannot start (None if it can), in one line: a program
    that is not there, and an interpreter's script that is not there (else
    the bot would be restarted for a whole tournament, each time saying
    only "can't open file")."""
    if not command:
        return f"{who} {name!r}: empty command"
    if cwd is not None and not cwd.is_dir():
        return f"{who} {name!r}: working directory {cwd} does not exist"
    program = resolve_command(command)[0]
    base = cwd or Path.cwd()
    if "/" in program:
        path = Path(program) if Path(program).is_absolute() else base / program
        if not path.is_file():
            return f"{who} {name!r}: command {program} does not exist"
        if not os.access(path, os.X_OK):
            return f"{who} {name!r}: command {program} is not executable (chmod +x it)"
    elif shutil.which(program) is None:
        return f"{who} {name!r}: command {program!r} is not found on PATH"
    script = script_of(command)
    if script is not None and not (base / script).is_file():
        return (f"{who} {name!r}: {command[0]} would run {script!r}, which does not exist in "
                f"{base} (check the command and the working directory)")
    return None


def check_commands(bots: list[tuple[str, list[str], Path | None]]) -> None:
    """Raise EntrantCommandError naming every command that cannot start."""
    problems = [p for name, command, cwd in bots if (p := command_problem(name, command, cwd))]
    if problems:
        raise EntrantCommandError(problems)


def launch_env(host: str, port: int, token: str, name: str,
               base: dict[str, str] | None = None) -> dict[str, str]:
    """The whole environment of a local bot."""
    base = dict(os.environ) if base is None else base
    env = {key: base[key] for key in PASSED_ENV if key in base}
    env.update({"ARENA_HOST": host, "ARENA_PORT": str(port), "ARENA_TOKEN": token,
                "ARENA_NAME": name, "PYTHONUNBUFFERED": "1"})
    return env


def bot_log_path(log_dir: Path | str, bot: str, match_id: str) -> Path:
    """Where the output of ``bot`` during ``match_id`` is kept (``lobby``:
    while not seated)."""
    return Path(log_dir) / bot / f"{match_id}.log"


class LogRouter:
    """Appends a bot's output to the log of every match it sits in now."""

    def __init__(self, log_dir: Path, bot: str, seated_in: Callable[[], list[str]]) -> None:
        self.log_dir = log_dir
        self.bot = bot
        self.seated_in = seated_in
        self._sizes: dict[str, int] = {}

    def write(self, data: bytes) -> None:
        for match_id in self.seated_in() or [LOBBY_LOG]:
            path = bot_log_path(self.log_dir, self.bot, match_id)
            size = self._sizes.get(match_id)
            if size is None:
                private_dir(self.log_dir)
                private_dir(path.parent)
                size = path.stat().st_size if path.exists() else 0
            if size >= MAX_LOG_BYTES:
                continue
            chunk = data[:MAX_LOG_BYTES - size]
            if len(chunk) < len(data):
                chunk += b"\n[log truncated at %d bytes]\n" % MAX_LOG_BYTES
            with open_private_append(path) as f:
                f.write(chunk)
            self._sizes[match_id] = size + len(chunk)


# -- leftovers of an arena that was killed ----------------------------------------
def _group_members(pgid: int, name: str) -> list[int]:
    """Live processes of process group ``pgid`` started as local bot ``name``."""
    marker = f"ARENA_NAME={name}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) != pgid or fields[0] == "Z":
                continue
            if marker in (entry / "environ").read_bytes().split(b"\0"):
                found.append(int(entry.name))
        except (OSError, ValueError, IndexError):
            continue
    return found


def reap_leftovers(log_dir: Path, node: str | None = None) -> list[int]:
    """Kill what is left of local bots of an earlier arena run (its bots'
    helpers, or bots where the death signal is not available). Only processes
    in a recorded process group that carry the bot's ``ARENA_NAME`` are
    touched, so a recycled pid is never hit."""
    killed: list[int] = []
    if not log_dir.is_dir() or not Path("/proc").is_dir():
        return killed
    for record in log_dir.glob(f"*/{process_file(node)}"):
        try:
            pgid = int(record.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            continue
        for pid in _group_members(pgid, record.parent.name):
            try:
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
            except OSError:
                pass
        record.unlink(missing_ok=True)
    if killed:
        log.warning("local_bot_leftovers_killed", pids=killed)
    return killed


@dataclass
class LocalBot:
    name: str
    command: list[str]
    cwd: Path | None = None
    crashes: int = 0
    exits_in_a_row: int = 0  # reset by the runner when the bot is seated
    last_exit_code: int | None = None
    token: str | None = None
    process: asyncio.subprocess.Process | None = None
    # The last exit: its code and the last lines it wrote (stdout and stderr).
    exit_code: int | None = None
    stderr_tail: list[str] = field(default_factory=list)
    # The last lines it wrote while running, kept as they come, so that a
    # bot that is still running but misbehaves can be shown too.
    recent_output: list[str] = field(default_factory=list)
    router: LogRouter | None = None
    log_dir: Path | None = None
    node: str | None = None  # names its process record (process_file)
    _env: dict[str, str] = field(default_factory=dict)
    _wanted: bool = False
    _watcher: asyncio.Task[None] | None = None
    _transport: asyncio.SubprocessTransport | None = None
    _exited: asyncio.Event | None = None  # set when the current process has exited
    _stopped: asyncio.subprocess.Process | None = None  # the process stop() ended

    @property
    def failing(self) -> bool:
        return self.exits_in_a_row >= FAILING_AFTER_EXITS

    async def start(self, host: str, port: int, token: str) -> None:
        self._wanted = True
        self.token = token
        self._env = launch_env(host, port, token, self.name)
        await self._spawn()
        self._watcher = asyncio.get_running_loop().create_task(self._watch())

    def _argv(self) -> list[str]:
        argv = resolve_command(self.command)
        if sys.platform.startswith("linux"):
            return [sys.executable, "-c", _LAUNCHER, str(os.getpid()), *argv]
        return argv

    async def _spawn(self) -> None:
        # create_subprocess_exec by hand, to hear the exit itself and to hold
        # the transport, which the watcher closes once the bot has exited.
        loop = asyncio.get_running_loop()
        transport, protocol = await loop.subprocess_exec(
            lambda: _BotProtocol(loop),
            *self._argv(), cwd=self.cwd, env=self._env, stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
            start_new_session=True)
        self._transport, self._exited = transport, protocol.exited
        self.process = asyncio.subprocess.Process(transport, protocol, loop)
        if self.log_dir is not None:
            record = self.log_dir / self.name / process_file(self.node)
            private_dir(self.log_dir)
            private_dir(record.parent)
            with open_private_append(record) as f:
                f.truncate(0)
                f.write(f"{self.process.pid}\n".encode())
        log.info("local_bot_started", bot=self.name, pid=self.process.pid,
                 command=shlex.join(self.command))

    async def _pump(self, proc: asyncio.subprocess.Process, tail: list[bytes]) -> None:
        """Route the bot's output to its log and keep its last lines; a line
        that arrives in several reads is one line (the last may be open)."""
        assert proc.stdout is not None
        open_line = False
        while chunk := await proc.stdout.read(65536):
            if self.router is not None:
                self.router.write(chunk)
            if open_line:
                chunk = tail.pop() + chunk
            open_line = not chunk.endswith((b"\n", b"\r"))
            tail[:] = (tail + chunk.splitlines())[-20:]
            self.recent_output = [line.decode("utf-8", "replace") for line in tail]

    async def _watch(self) -> None:
        backoff = 0.2
        while self._wanted and self.process is not None:
            proc, transport, exited = self.process, self._transport, self._exited
            assert transport is not None and exited is not None
            tail: list[bytes] = []
            pump = asyncio.get_running_loop().create_task(self._pump(proc, tail))
            try:
                await exited.wait()
                crashed = self._stopped is not proc  # it went by itself
                self._kill_group(proc.pid)  # helpers it left behind
                await asyncio.wait({pump}, timeout=LAST_OUTPUT_S)
            finally:
                pump.cancel()
                transport.close()  # its pipe too, should a helper outside its group hold it
            if not crashed:
                return
            code = proc.returncode
            self.crashes += 1
            self.exits_in_a_row += 1
            self.last_exit_code = self.exit_code = code
            self.stderr_tail = [line.decode("utf-8", "replace") for line in tail]
            log.warning("local_bot_exited", bot=self.name, code=code, crashes=self.crashes,
                        output=self.stderr_tail[-5:],
                        log=str(self.log_dir / self.name) if self.log_dir else None)
            if not self._wanted:
                return
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, 5.0)
            if self._wanted:
                await self._spawn()

    @staticmethod
    def _kill_group(pgid: int, sig: int = signal.SIGKILL) -> None:
        try:
            os.killpg(pgid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    async def stop(self, grace_s: float = STOP_GRACE_S) -> None:
        """SIGTERM to the bot's process group, SIGKILL after ``grace_s``."""
        self._wanted = False
        proc, exited = self.process, self._exited
        # One that has exited already went by itself: its watcher counts it.
        if proc is not None and exited is not None and proc.returncode is None:
            self._stopped = proc
            self._kill_group(proc.pid, signal.SIGTERM)
            try:
                async with asyncio.timeout(grace_s):
                    await exited.wait()
            except TimeoutError:
                self._kill_group(proc.pid, signal.SIGKILL)
                await exited.wait()
        if proc is not None:
            self._kill_group(proc.pid)
        if self._watcher is not None:
            # Not wait_for: a cancellation of this stop (a shutdown) must
            # reach its caller, not be taken for the watcher's own end.
            done, _ = await asyncio.wait({self._watcher}, timeout=grace_s)
            if not done:
                self._watcher.cancel()
            elif not self._watcher.cancelled() and self._watcher.exception() is not None:
                log.warning("local_bot_watch_failed", bot=self.name,
                            error=repr(self._watcher.exception()))
        if self.log_dir is not None:
            (self.log_dir / self.name / process_file(self.node)).unlink(missing_ok=True)


class LocalBots:
    """Starts, watches and stops a set of local bots for one server."""

    def __init__(self, log_dir: Path | None = None, node: str | None = None) -> None:
        self.bots: dict[str, LocalBot] = {}
        self.log_dir = log_dir
        self.node = node
        if log_dir is not None:
            reap_leftovers(log_dir, node)

    async def start(self, bot: LocalBot, server: "object") -> None:
        from arena.server.server import ArenaServer

        assert isinstance(server, ArenaServer) and server.port is not None
        self.bots[bot.name] = bot
        if self.log_dir is not None:
            bot.log_dir, bot.node = self.log_dir, self.node
            bot.router = LogRouter(self.log_dir, bot.name, lambda: [
                match_id for match_id, table in list(server.tables.items())
                if bot.name in table.players])
        await bot.start(server.config.host, server.port, server.local_token(bot.name))

    async def stop(self) -> None:
        await asyncio.gather(*(bot.stop() for bot in self.bots.values()))

    def crashes(self) -> dict[str, int]:
        return {name: bot.crashes for name, bot in self.bots.items()}
