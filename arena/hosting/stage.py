"""The host folders a sandbox mounts, shown to it as filesystems of their own.

The kernel shows every process, in ``/proc/self/mountinfo``, the *root* of
each mount: for a bind mount, the source folder's path inside its
filesystem. A plain bind of the arena's interpreter, the SDK's packages or
a version's build folder therefore names where they live on the host (a
home directory, a virtualenv, the store's folder), and bubblewrap cannot
hide it: the field is computed by the kernel from the mount itself.

So each read-only folder a sandbox sees (besides ``/usr`` and ``/etc``,
whose paths are the same inside) is first mounted as a read-only
**overlayfs** whose only layers are that folder and an empty one. An
overlay is a filesystem of its own: its root field is ``/``, and its
options name its layers as they were given, here ``.`` (the source, opened
as the working directory while mounting) and the empty folder of the stage,
a fixed arena path. Nothing is copied: the overlay reads through to the
files, so start time and memory are those of a bind mount.

These mounts are made in the child that becomes bubblewrap, after it has
entered a mount namespace of its own with every mount private: they are
seen by that sandbox alone, and vanish with it (nothing to clean up after a
crash). Files that cannot be overlaid are handed over otherwise (a single
file as data on a descriptor, the run's socket as an ``O_PATH``
descriptor, see ``sandbox``).
"""

from __future__ import annotations

import ctypes
import functools
import os
from dataclasses import dataclass
from pathlib import Path

STAGE_ROOT = "/run/arena-sandbox-stage"  # an empty folder; a tmpfs in each sandbox's namespace
_EMPTY = f"{STAGE_ROOT}/empty"
_CLONE_NEWNS = 0x00020000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV = 1, 2, 4
_MS_REC, _MS_PRIVATE = 0x4000, 1 << 18


@dataclass(frozen=True)
class StagedDir:
    """A host folder shown at ``path`` as an overlay of its own."""

    source: Path
    path: str  # where bubblewrap finds it, in the sandbox's outer namespace
    target: str = ""  # where the sandbox sees it


@functools.cache
def overlay_available() -> bool:
    """Whether this kernel has overlayfs (without it, folders are bound as
    they are and their host paths stay visible; see docs/hosting.md)."""
    try:
        with open("/proc/filesystems") as handle:
            return any(line.split()[-1:] == ["overlay"] for line in handle)
    except OSError:
        return False


def plan(sources: list[Path]) -> list[StagedDir]:
    """Where each folder appears on the stage (pure: numbered in order)."""
    return [StagedDir(source, f"{STAGE_ROOT}/{index}") for index, source in enumerate(sources)]


@functools.cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def prepare() -> None:
    """In the arena (before forking): the stage's mount point exists, and the
    C library is loaded (not in the forked child)."""
    os.makedirs(STAGE_ROOT, mode=0o755, exist_ok=True)
    _libc()


def enter(staged: list[StagedDir]) -> None:
    """In the child that becomes bubblewrap: a mount namespace of its own,
    with each staged folder overlaid on the stage. Runs between fork and
    exec, so it only makes system calls."""
    libc = _libc()
    _check(libc.unshare(_CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    # Private: nothing mounted here reaches the host's namespace.
    _check(libc.mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None), "making / private")
    _check(libc.mount(b"arena", STAGE_ROOT.encode(), b"tmpfs", _MS_NOSUID | _MS_NODEV,
                      b"size=64k,mode=0755"), f"mounting a tmpfs on {STAGE_ROOT}")
    os.mkdir(_EMPTY, 0o755)
    here = os.open("/", os.O_PATH | os.O_DIRECTORY)
    try:
        for item in staged:
            os.mkdir(item.path, 0o755)
            # The source as ``.``: the overlay's options then name no host path.
            os.chdir(item.source)
            _check(libc.mount(b"arena", item.path.encode(), b"overlay",
                              _MS_RDONLY | _MS_NOSUID | _MS_NODEV,
                              f"lowerdir=.:{_EMPTY}".encode()), f"overlaying {item.path}")
    finally:
        os.fchdir(here)
        os.close(here)
