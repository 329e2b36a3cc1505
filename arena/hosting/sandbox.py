"""The sandbox a hosted bot builds and plays in: bubblewrap plus limits.

Inside: the system read-only (``/usr`` and the merged ``/bin`` ``/lib``
links; of ``/etc`` only what a runtime reads, see ``rootfs``), the arena's
Python at a neutral path, the bot's own files at ``/bot`` (read-only when
playing), a
small private tmpfs at ``/tmp`` that is also ``$HOME``, fresh PID, IPC, UTS
and network namespaces (only its own loopback: no route anywhere, the arena
included, except the one Unix socket the arena hands it), a user id of its
own, and limits on memory, processes, open files and CPU.

Limits come from cgroups where this machine lets the arena create them (v2,
or v1's ``memory``/``pids``/``cpu`` controllers) and from rlimits always.
The whole process tree dies with the sandbox: bubblewrap's
``--die-with-parent`` and PID namespace take everything in it down when its
first process ends, and the cgroup is emptied with SIGKILL as a backstop.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import resource
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

import structlog

from arena.hosting.cgroups import CgroupTree, SandboxCgroup, default_hosted_cpus
from arena.hosting import stage
from arena.hosting.errors import SandboxError
from arena.hosting.rootfs import PYTHON_PREFIX, etc_binds, etc_files, localtime_args, python_runtime
from arena.hosting.syscalls import filter_fd
from arena.hosting.uids import POOL, UidLease

log = structlog.get_logger("arena.hosting.sandbox")

_ids = itertools.count(1)
_SETPRIV = "/usr/bin/setpriv"


@dataclass(frozen=True)
class SandboxLimits:
    memory_bytes: int = 512 << 20
    processes: int = 64
    open_files: int = 256
    cpu_seconds: int = 600  # total CPU time; a per-move budget is the arena's deadline
    cpu_share: float = 1.0  # cores, where a cpu cgroup is available
    # Cores for all hosted bots together (the parent cgroup's cpu.max).
    hosted_cpus: float = field(default_factory=default_hosted_cpus)
    tmp_bytes: int = 64 << 20
    wall_seconds: float | None = None  # builds: killed after this long


@dataclass(frozen=True)
class Mount:
    source: Path
    target: str
    writable: bool = False


@dataclass
class SandboxSpec:
    """One sandboxed command: what it sees and what it may use."""

    command: list[str]
    app_dir: Path
    app_writable: bool = False
    env: dict[str, str] = field(default_factory=dict)
    mounts: list[Mount] = field(default_factory=list)
    limits: SandboxLimits = field(default_factory=SandboxLimits)
    # The arena's Unix socket for this run: handed over as a descriptor,
    # reached inside at ``$ARENA_SOCKET`` (``/proc/self/fd/N``), never mounted.
    socket: Path | None = None


def bwrap_path() -> str:
    path = shutil.which("bwrap")
    if path is None:
        raise SandboxError("bubblewrap is not installed: apt-get install bubblewrap")
    return path


def python_mounts() -> list[Mount]:
    """The arena's interpreter (at /arena/python unless it is the system's)
    and the SDK with its packages at /arena/lib, read-only, for Python bots."""
    return [Mount(m.source, m.target) for m in python_runtime().mounts]


def sandbox_python() -> str:
    """The arena's interpreter as a sandbox names it (with ``python_mounts``)."""
    return python_runtime().executable


def _dirs(target: str, made: set[str]) -> list[str]:
    """Make the parents of a mount point walkable: directories bubblewrap
    makes for mount points are private to root, and the bot's user id must
    be able to walk through them."""
    args: list[str] = []
    for parent in reversed(Path(target).parents[:-1]):
        if str(parent) not in made:
            made.add(str(parent))
            args += ["--perms", "0755", "--dir", str(parent)]
    return args


def _system_args(made: set[str]) -> list[str]:
    args = ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        top = Path("/") / name
        if top.is_symlink():
            args += ["--symlink", os.readlink(top), str(top)]
        elif top.is_dir():
            args += ["--ro-bind", str(top), str(top)]
    # Not the host's /etc (its accounts, host name, keys, service
    # configuration): the few files a runtime reads, the rest written for
    # the sandbox (``data_fds``).
    for mount in etc_binds():
        args += [*_dirs(mount.target, made), "--ro-bind", str(mount.source), mount.target]
    args += [*_dirs("/etc/localtime", made), *localtime_args()]
    return args


def bwrap_argv(spec: SandboxSpec, uid: int, seccomp_fd: int | None = None,
               data_fds: dict[str, int] | None = None, staged: dict[str, str] | None = None,
               socket_fd: int | None = None) -> list[str]:
    """The bubblewrap command line for ``spec`` (pure: easy to inspect in tests);
    ``seccomp_fd`` is where bubblewrap reads the syscall filter from,
    ``data_fds`` where it reads the files written for the sandbox (by path
    inside: ``etc_files``, and mounted files given as data), ``staged``
    where each mounted folder is overlaid (by path inside, see ``stage``),
    ``socket_fd`` the descriptor of the run's socket."""
    data_fds = data_fds or {}
    staged = staged or {}
    limits = spec.limits
    made: set[str] = set()
    # bubblewrap runs as root (it can then mount sources the bot's user id
    # could not reach) and ``setpriv`` drops to the sandbox's own user id,
    # with no capabilities and no way to gain any, before the bot starts.
    argv = [bwrap_path(), "--unshare-ipc", "--unshare-pid", "--unshare-uts",
            "--unshare-cgroup-try", "--die-with-parent", "--new-session",
            "--hostname", "bot", *_system_args(made), "--proc", "/proc", "--dev", "/dev",
            "--perms", "1777", "--size", str(limits.tmp_bytes), "--tmpfs", "/tmp",
            "--unshare-net"]  # always: builds too (no hosted code sees the host's network)
    for target, fd in sorted(data_fds.items()):
        argv += [*_dirs(target, made), "--perms", "0644", "--ro-bind-data", str(fd), target]
    if seccomp_fd is not None:
        argv += ["--seccomp", str(seccomp_fd)]
    argv += ["--bind" if spec.app_writable else "--ro-bind", staged.get("/bot", str(spec.app_dir)),
             "/bot"]
    for mount in spec.mounts:
        if mount.target in data_fds:
            continue
        argv += _dirs(mount.target, made)
        argv += ["--bind" if mount.writable else "--ro-bind",
                 staged.get(mount.target, str(mount.source)), mount.target]
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "TMPDIR": "/tmp",
           "LANG": "C.UTF-8", "PYTHONPATH": "/arena/lib", "PYTHONDONTWRITEBYTECODE": "1"}
    if any(mount.target == PYTHON_PREFIX for mount in spec.mounts):
        env.update(python_runtime().env)  # what the mounted interpreter needs to start
    env.update(spec.env)
    if socket_fd is not None:
        env["ARENA_SOCKET"] = f"/proc/self/fd/{socket_fd}"
    argv.append("--clearenv")
    for key, value in env.items():
        argv += ["--setenv", key, value]
    argv += ["--chdir", "/bot", "--", _SETPRIV, f"--reuid={uid}", f"--regid={uid}",
             "--clear-groups", "--no-new-privs", "--inh-caps=-all", "--bounding-set=-all",
             "--", *spec.command]
    return argv


def _data_fd(data: bytes) -> int:
    """An anonymous in-memory file holding ``data``, read from its start."""
    fd = os.memfd_create("arena-sandbox", 0)  # not inherited unless passed
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _hidden_sources(spec: SandboxSpec) -> tuple[list[stage.StagedDir], dict[str, bytes]]:
    """What of ``spec``'s mounts would name a host path inside: read-only
    folders (overlaid on the stage, by path inside) and read-only files
    (given as data). Writable mounts are tmpfs roots (a build's disk) and
    mounts at their own path (``/usr``) name nothing and stay binds."""
    folders: list[tuple[str, Path]] = []
    files: dict[str, bytes] = {}
    if not spec.app_writable:
        folders.append(("/bot", spec.app_dir))
    for mount in spec.mounts:
        if mount.writable or str(mount.source) == mount.target:
            continue
        if mount.source.is_dir():
            folders.append((mount.target, mount.source))
        elif mount.source.is_file():
            files[mount.target] = mount.source.read_bytes()
    if not stage.overlay_available():
        return [], files
    staged = stage.plan([source for _, source in folders])
    return [replace(item, target=target) for item, (target, _) in zip(staged, folders)], files


def _child_setup(procs_files: list[str], limits: SandboxLimits, limit_data: bool,
                 staged: list[stage.StagedDir]) -> None:
    """Runs in the child between fork and exec: overlays the mounted folders
    in a mount namespace of its own (``stage``), joins the cgroups and sets
    the rlimits, which the bot inherits (RLIMIT_NPROC counts once setpriv
    has switched to the sandbox's user id)."""
    if staged:
        stage.enter(staged)
    os.setsid()
    pid = str(os.getpid())
    for path in procs_files:
        with open(path, "w") as handle:
            handle.write(pid)
    resource.setrlimit(resource.RLIMIT_NPROC, (limits.processes, limits.processes))
    resource.setrlimit(resource.RLIMIT_NOFILE, (limits.open_files, limits.open_files))
    resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 5))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits.tmp_bytes * 4, limits.tmp_bytes * 4))
    if limit_data:
        # Not RLIMIT_AS: Go's runtime reserves hundreds of MiB of address space
        # at start and Java 1 GiB for classes alone, most of it never used; an
        # address-space limit kills them before their first line. RLIMIT_DATA
        # (Linux 4.7+) counts private writable memory: what a program can
        # fill, not what it reserves with PROT_NONE.
        resource.setrlimit(resource.RLIMIT_DATA, (limits.memory_bytes, limits.memory_bytes))
    os.nice(5)


class Sandbox:
    """A running sandboxed process; ``stop()`` kills its whole tree."""

    def __init__(self, spec: SandboxSpec, *, stderr: int | None = None,
                 uid: int | None = None, cgroups: CgroupTree | None = None) -> None:
        """``uid``: one the caller leased (a build keeps one over its steps);
        by default the sandbox leases its own, unique on this machine.
        ``cgroups``: the hierarchy its cgroups are made in (the machine's)."""
        self.spec = spec
        self._lease: UidLease | None = None if uid is not None else POOL.lease()
        self.uid = uid if uid is not None else self._lease.uid  # type: ignore[union-attr]
        self.name = f"{os.getpid()}-{next(_ids)}"
        self._stderr = stderr
        self.process: asyncio.subprocess.Process | None = None
        self._cgroups: SandboxCgroup | None = None
        self._tree = cgroups

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    async def start(self) -> None:
        if os.geteuid() != 0:
            raise SandboxError("the sandbox needs the arena to run as root (it gives each bot "
                               "a user id of its own)")
        staged, files = _hidden_sources(self.spec)
        if staged:
            stage.prepare()
        fds = [filter_fd()]
        data = {**etc_files(self.uid), **files}
        data_fds = {path: _data_fd(content) for path, content in data.items()}
        fds += data_fds.values()
        socket_fd = None
        if self.spec.socket is not None:
            # O_PATH: the relay connects through /proc/self/fd/N; no mount
            # names the socket's folder, and the relay (not dumpable) keeps
            # the descriptor from the bot.
            socket_fd = os.open(self.spec.socket, os.O_PATH)
            fds.append(socket_fd)
        argv = bwrap_argv(self.spec, self.uid, fds[0], data_fds,
                          {item.target: item.path for item in staged}, socket_fd)
        # bubblewrap reads its options from a descriptor (``--args``): its
        # command line, which every process in the sandbox can read as
        # /proc/1/cmdline, then names no host path, only the command that
        # runs inside (which must stay on the command line).
        split = argv.index("--")
        fds.append(_data_fd(b"".join(arg.encode() + b"\0" for arg in argv[1:split])))
        argv = [argv[0], "--args", str(fds[-1]), *argv[split:]]
        limits = self.spec.limits
        cgroups = self._cgroups = SandboxCgroup(self.name, limits.memory_bytes, limits.processes,
                                                limits.cpu_share, limits.hosted_cpus, self._tree)
        procs = cgroups.procs_files()
        limit_data = not cgroups.limits_memory
        try:
            self.process = await asyncio.create_subprocess_exec(
                *argv, stdin=asyncio.subprocess.DEVNULL,
                stdout=self._stderr or asyncio.subprocess.DEVNULL,
                stderr=self._stderr or asyncio.subprocess.DEVNULL,
                preexec_fn=lambda: _child_setup(procs, limits, limit_data, staged), pass_fds=fds)
        except subprocess.SubprocessError as exc:
            raise SandboxError(f"the sandbox could not be set up ({exc}); its folders are "
                               "overlaid (overlayfs) in a mount namespace of its own, which "
                               "needs root and a kernel with overlayfs") from exc
        finally:
            for fd in fds:
                os.close(fd)
        log.info("sandbox_started", pid=self.process.pid, uid=self.uid, command=self.spec.command[:3])

    async def wait(self, timeout_s: float | None = None) -> int:
        assert self.process is not None
        try:
            async with asyncio.timeout(timeout_s):
                return await self.process.wait()
        except TimeoutError:
            await self.stop()
            raise

    async def stop(self) -> None:
        """Kill every process of the sandbox and remove its cgroups."""
        proc = self.process
        if proc is not None and proc.returncode is None:
            for sig in (signal.SIGTERM, signal.SIGKILL):
                try:
                    os.killpg(proc.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    async with asyncio.timeout(1.0):
                        await proc.wait()
                    break
                except TimeoutError:
                    continue
        if self._cgroups is not None:
            self._cgroups.kill_all()
            for _ in range(20):
                if self._cgroups.empty():
                    break
                await asyncio.sleep(0.05)
            self._cgroups.remove()
        if self._lease is not None:  # its processes are gone: the id is free
            self._lease.release()
