"""What a sandbox sees of the machine's files, chosen so that a bot learns
nothing of the host's layout.

- ``/etc`` is not the host's: only the few files a runtime reads are bound
  (the dynamic linker's cache and configuration, the time zone, the
  ``alternatives`` links that ``cc`` and ``java`` resolve through, Java's
  configuration, OpenSSL's), and ``passwd``, ``group``, ``hosts`` and
  ``nsswitch.conf`` are written for the sandbox: root and the bot's own user
  id, no account of the host.
- The arena's Python is mounted at ``/arena/python`` when it lives outside
  ``/usr`` (a pyenv or a virtualenv under someone's home), and only the SDK's
  packages (``protocol`` and its dependencies) are importable, from
  ``/arena/lib``: ``sys.executable``, ``sys.prefix`` and every command line
  name ``/arena/...``, never the folder the arena runs from.

Synthetic files reach bubblewrap as file descriptors (``--ro-bind-data``), so
nothing is written to the host's disk for them.
"""

from __future__ import annotations

import functools
import glob
import importlib.util
import os
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

from arena.hosting.errors import SandboxError

PYTHON_PREFIX = "/arena/python"
LIBRARY_DIR = "/arena/lib"
# The SDK's own imports beyond the standard library (protocol/codec.py and
# protocol/sdk): what a Python bot may import besides the standard library.
SDK_PACKAGES = ("protocol", "msgpack", "msgspec", "structlog")

# Host files under /etc a runtime reads, bound read-only where they exist.
ETC_BINDS = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives",
             "/etc/ssl/openssl.cnf")
ETC_GLOBS = ("/etc/java-*",)  # the JDK's conf/ links into /etc/java-<version>


@dataclass(frozen=True)
class HostMount:
    """A host path bound read-only at ``target`` inside the sandbox."""

    source: Path
    target: str


@dataclass(frozen=True)
class PythonRuntime:
    """The arena's interpreter as a sandbox sees it."""

    executable: str  # its path inside the sandbox
    mounts: tuple[HostMount, ...]  # the interpreter's install and the SDK's packages
    env: tuple[tuple[str, str], ...]  # variables it needs inside (LD_LIBRARY_PATH)


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise SandboxError(f"the Python package {name!r}, which hosted Python bots import "
                           "through the SDK, is not installed for the arena")
    return Path(next(iter(spec.submodule_search_locations))).resolve()


@functools.cache
def python_runtime() -> PythonRuntime:
    """Where the arena's interpreter and the SDK appear inside a sandbox."""
    base = Path(os.path.realpath(sys.base_prefix))
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    mounts = [HostMount(_package_dir(name), f"{LIBRARY_DIR}/{name}") for name in SDK_PACKAGES]
    env: list[tuple[str, str]] = []
    if str(base).startswith("/usr/") or str(base) == "/usr":
        # The system's own Python: its path says nothing about this host.
        # Not the virtualenv's: the SDK's packages come from /arena/lib.
        executable = str(base / "bin" / version)
    else:
        mounts.insert(0, HostMount(base, PYTHON_PREFIX))
        executable = f"{PYTHON_PREFIX}/bin/{version}"
        libdir = sysconfig.get_config_var("LIBDIR")
        if sysconfig.get_config_var("Py_ENABLE_SHARED") and libdir and \
                os.path.realpath(libdir).startswith(str(base) + "/"):
            # A shared libpython is found through the build's absolute
            # RUNPATH, which names the host folder: point the loader at the
            # mounted copy instead.
            inside = PYTHON_PREFIX + os.path.realpath(libdir)[len(str(base)):]
            env.append(("LD_LIBRARY_PATH", inside))
    if not os.path.exists(_host_path(executable, mounts)):
        raise SandboxError(f"the arena's interpreter has no {version} in {base}/bin")
    return PythonRuntime(executable, tuple(mounts), tuple(env))


def _host_path(inside: str, mounts: list[HostMount]) -> str:
    for mount in mounts:
        if inside.startswith(mount.target + "/"):
            return str(mount.source) + inside[len(mount.target):]
    return inside


def etc_binds() -> list[HostMount]:
    """The host's /etc files a runtime needs (only those that exist here)."""
    paths = [p for p in ETC_BINDS if os.path.exists(p)]
    for pattern in ETC_GLOBS:
        paths += sorted(glob.glob(pattern))
    return [HostMount(Path(p), p) for p in paths]


def etc_files(uid: int) -> dict[str, bytes]:
    """The /etc files written for one sandbox: its accounts, names and
    where it looks them up."""
    return {
        "/etc/passwd": (f"root:x:0:0:root:/:/usr/sbin/nologin\n"
                        f"bot:x:{uid}:{uid}:hosted bot:/tmp:/bin/sh\n").encode(),
        "/etc/group": f"root:x:0:\nbot:x:{uid}:\n".encode(),
        "/etc/hosts": b"127.0.0.1\tlocalhost bot\n::1\tlocalhost\n",
        "/etc/nsswitch.conf": b"passwd: files\ngroup: files\nhosts: files\n",
    }


def localtime_args() -> list[str]:
    """``/etc/localtime`` as the host has it: a link into /usr/share/zoneinfo
    (visible anyway), or the file itself."""
    path = Path("/etc/localtime")
    if path.is_symlink():
        target = os.path.realpath(path)
        if target.startswith("/usr/"):
            return ["--symlink", target, str(path)]
    if path.is_file():
        return ["--ro-bind", str(path), str(path)]
    return []
