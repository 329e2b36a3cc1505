"""A build's own disk: a tmpfs of fixed size and file count, then a clean copy.

A build writes into ``/bot``. That directory is a tmpfs mounted for this
build alone (``size=`` bounds its bytes, ``nr_inodes=`` its files and
directories), so no build can fill the arena's disk or make millions of
files. When the build has run, what it left is copied to the version's
``app`` directory keeping only plain files (mode 0644, or 0755 when
executable), directories (0755) and symbolic links that stay inside the bot's
own files; everything is owned by the arena, nothing by the build's user id.
FIFOs, sockets, devices and links that point elsewhere are dropped.

Every walk over the bot's files runs in a worker thread, never on the loop.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

from arena.hosting.errors import BuildError, SandboxError


@dataclass(frozen=True)
class Usage:
    disk_full: bool
    files_full: bool


class BuildDisk:
    """``async with BuildDisk(path, size, files, uid) as disk`` mounts it,
    fills it with the bot's files and unmounts it at the end."""

    def __init__(self, path: Path, size_bytes: int, files: int, uid: int) -> None:
        self.path = path
        self.size_bytes = size_bytes
        self.files = files
        self.uid = uid

    async def __aenter__(self) -> "BuildDisk":
        options = (f"size={self.size_bytes},nr_inodes={self.files},mode=0755,"
                   f"uid={self.uid},gid={self.uid},nosuid,nodev")
        # Mounting and unmounting run in a thread that finishes even when the
        # build is cancelled (the server stops), so no mount is left behind.
        mounting = asyncio.ensure_future(asyncio.to_thread(_mount, self.path, options))
        try:
            code, output = await asyncio.shield(mounting)
        except asyncio.CancelledError:
            await asyncio.wait([mounting])
            await asyncio.to_thread(_unmount, self.path)
            raise
        if code != 0:
            await asyncio.to_thread(_unmount, self.path)
            raise SandboxError(f"cannot mount the build's own disk (tmpfs): {output.strip()}")
        return self

    async def __aexit__(self, *exc: object) -> None:
        unmounting = asyncio.ensure_future(asyncio.to_thread(_unmount, self.path))
        try:
            await asyncio.shield(unmounting)
        except asyncio.CancelledError:
            await asyncio.wait([unmounting])
            raise

    async def fill_from(self, source: Path) -> None:
        await asyncio.to_thread(_copy_in, source, self.path, self.uid)

    def usage(self) -> Usage:
        """How full it is; a full disk or file table explains a failed build."""
        vfs = os.statvfs(self.path)
        return Usage(disk_full=vfs.f_bavail * vfs.f_frsize < 64 * 1024,
                     files_full=vfs.f_favail == 0)

    def check(self) -> None:
        usage = self.usage()
        if usage.disk_full:
            raise BuildError(f"the build used all of its {self.size_bytes >> 20} MiB of disk "
                             "(its output must fit; see the hosting guide)")
        if usage.files_full:
            raise BuildError(f"the build made more than its {self.files:,} files and "
                             "directories (see the hosting guide)")

    async def copy_out(self, target: Path) -> None:
        await asyncio.to_thread(_copy_out, self.path, target)


async def clear_leftover(path: Path) -> None:
    """The build disk of an arena that was killed mid-build: unmount, remove."""
    await asyncio.to_thread(_unmount, path)


def _mount(path: Path, options: str) -> tuple[int, str]:
    """(a worker thread)"""
    path.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "arena-build", str(path)],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True)
    return done.returncode, done.stdout + done.stderr


def _unmount(path: Path) -> None:
    """(a worker thread) Unmount if mounted (lazily if something escaped the
    sandbox and still holds it), then remove the mount point."""
    if os.path.ismount(path):
        done = subprocess.run(["umount", str(path)], stdin=subprocess.DEVNULL, capture_output=True)
        if done.returncode != 0:
            subprocess.run(["umount", "-l", str(path)], stdin=subprocess.DEVNULL,
                           capture_output=True)
    shutil.rmtree(path, ignore_errors=True)


def _copy_in(source: Path, target: Path, uid: int) -> None:
    """(a worker thread) The unpacked bot into the build disk, owned by the build."""
    for root, dirs, files in os.walk(source):
        rel = os.path.relpath(root, source)
        here = target if rel == "." else target / rel
        for name in dirs:
            (here / name).mkdir(mode=0o755)
            os.chown(here / name, uid, uid)
        for name in files:
            shutil.copy2(os.path.join(root, name), here / name, follow_symlinks=False)
            os.lchown(here / name, uid, uid)


def _copy_out(source: Path, target: Path) -> None:
    """(a worker thread) What the build left, cleaned, replaces ``target``."""
    fresh = target.with_name(target.name + ".new")
    shutil.rmtree(fresh, ignore_errors=True)
    fresh.mkdir(mode=0o755)
    real_source = os.path.realpath(source)
    for root, dirs, files in os.walk(source):
        rel = os.path.relpath(root, source)
        here = fresh if rel == "." else fresh / rel
        kept_dirs = []
        for name in [*dirs, *files]:
            path = os.path.join(root, name)
            info = os.lstat(path)
            if stat.S_ISDIR(info.st_mode):
                (here / name).mkdir(mode=0o755)
                kept_dirs.append(name)
            elif stat.S_ISREG(info.st_mode):
                shutil.copyfile(path, here / name, follow_symlinks=False)
                os.chmod(here / name, 0o755 if info.st_mode & 0o111 else 0o644)
            elif stat.S_ISLNK(info.st_mode):
                link = os.readlink(path)
                inside = os.path.realpath(path)
                if not os.path.isabs(link) and inside.startswith(real_source + os.sep):
                    os.symlink(link, here / name)
            # FIFOs, sockets and devices are not kept.
        dirs[:] = kept_dirs
    os.chmod(fresh, 0o755)
    old = target.with_name(target.name + ".old")
    if target.exists():
        os.replace(target, old)
    os.replace(fresh, target)
    shutil.rmtree(old, ignore_errors=True)
