"""Unpacking a submission: one source file, a ``.zip`` or a ``.tar.gz``.

Nothing in an upload is trusted. Every member is checked before a byte is
written: a plain relative path inside the archive root (no absolute path, no
``..``, no drive letters or backslashes), a regular file or a directory (no
symbolic or hard links, devices or FIFOs), and the totals stay under the
limits — counted from what is actually read, not from the sizes the archive
claims, so a zip bomb stops at the limit.
"""

from __future__ import annotations

import io
import stat
import tarfile
import zipfile
import zlib
from typing import IO
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from arena.hosting.errors import ArchiveError

_CHUNK = 64 * 1024


@dataclass(frozen=True)
class ArchiveLimits:
    max_upload_bytes: int = 8 << 20  # the upload as sent
    max_total_bytes: int = 32 << 20  # everything unpacked
    max_files: int = 2000
    max_path_length: int = 200


def safe_member_path(name: str, limits: ArchiveLimits) -> PurePosixPath | None:
    """The relative path a member may be written to; None for the root itself.

    Raises :class:`ArchiveError` for anything that could land outside the
    archive root.
    """
    if "\\" in name or "\x00" in name:
        raise ArchiveError(f"member {name!r}: backslashes and NUL bytes are not allowed in paths")
    if len(name) > limits.max_path_length:
        raise ArchiveError(f"member {name[:40]!r}…: path longer than {limits.max_path_length} characters")
    path = PurePosixPath(name)
    if path.is_absolute() or (path.parts and path.parts[0].endswith(":")):
        raise ArchiveError(f"member {name!r}: absolute paths are not allowed")
    parts = [part for part in path.parts if part not in ("", ".")]
    if ".." in parts:
        raise ArchiveError(f"member {name!r}: '..' would leave the archive root")
    if not parts:
        return None
    return PurePosixPath(*parts)


class _Budget:
    def __init__(self, limits: ArchiveLimits) -> None:
        self.limits = limits
        self.files = 0
        self.bytes = 0

    def add_file(self, name: str) -> None:
        self.files += 1
        if self.files > self.limits.max_files:
            raise ArchiveError(f"more than {self.limits.max_files} files in the archive")

    def add_bytes(self, n: int) -> None:
        self.bytes += n
        if self.bytes > self.limits.max_total_bytes:
            raise ArchiveError(
                f"unpacked size over {self.limits.max_total_bytes >> 20} MiB")


def _write(dest: Path, rel: PurePosixPath, source: IO[bytes],
           budget: _Budget, mode: int = 0o644) -> None:
    target = dest.joinpath(*rel.parts)
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.is_symlink() or (target.exists() and not target.is_file()):
        raise ArchiveError(f"member {str(rel)!r} collides with another member")
    with open(target, "wb") as out:
        while chunk := source.read(_CHUNK):
            budget.add_bytes(len(chunk))
            out.write(chunk)
    target.chmod(0o755 if mode & 0o111 else 0o644)


def _unpack_zip(data: bytes, dest: Path, budget: _Budget) -> None:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile as exc:
        raise ArchiveError(f"not a valid zip archive: {exc}") from None
    with archive:
        for info in archive.infolist():
            rel = safe_member_path(info.filename, budget.limits)
            unix_mode = info.external_attr >> 16
            if unix_mode and stat.S_ISLNK(unix_mode):
                raise ArchiveError(f"member {info.filename!r}: links are not allowed")
            if stat.S_IFMT(unix_mode) and not (stat.S_ISREG(unix_mode) or stat.S_ISDIR(unix_mode)):
                raise ArchiveError(f"member {info.filename!r}: only files and directories are allowed")
            if rel is None:
                continue
            if info.is_dir():
                dest.joinpath(*rel.parts).mkdir(parents=True, exist_ok=True)
                continue
            budget.add_file(info.filename)
            try:
                with archive.open(info) as member:
                    _write(dest, rel, member, budget, unix_mode)
            except (zipfile.BadZipFile, NotImplementedError, RuntimeError) as exc:
                raise ArchiveError(f"member {info.filename!r} cannot be read: {exc}") from None


def _unpack_tar(data: bytes, dest: Path, budget: _Budget) -> None:
    try:
        archive = tarfile.open(fileobj=io.BytesIO(data), mode="r:*")
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise ArchiveError(f"not a valid tar archive: {exc}") from None
    with archive:
        try:
            for member in archive:
                rel = safe_member_path(member.name, budget.limits)
                if member.issym() or member.islnk():
                    raise ArchiveError(f"member {member.name!r}: links are not allowed")
                if not (member.isfile() or member.isdir()):
                    raise ArchiveError(f"member {member.name!r}: only files and directories are allowed")
                if rel is None:
                    continue
                if member.isdir():
                    dest.joinpath(*rel.parts).mkdir(parents=True, exist_ok=True)
                    continue
                budget.add_file(member.name)
                source = archive.extractfile(member)
                if source is None:
                    raise ArchiveError(f"member {member.name!r} cannot be read")
                with source:
                    _write(dest, rel, source, budget, member.mode)
        except (tarfile.TarError, EOFError, zlib.error) as exc:
            raise ArchiveError(f"the tar archive is damaged: {exc}") from None


def archive_kind(filename: str, data: bytes) -> str:
    """``zip``, ``tar`` or ``file``, from the name and the first bytes."""
    lower = filename.lower()
    if lower.endswith(".zip") or data[:4] == b"PK\x03\x04":
        return "zip"
    if lower.endswith((".tar.gz", ".tgz", ".tar")) or data[:2] == b"\x1f\x8b":
        return "tar"
    return "file"


def unpack_submission(data: bytes, filename: str, dest: Path,
                      limits: ArchiveLimits = ArchiveLimits()) -> list[str]:
    """Unpack an upload into the empty directory ``dest``; return its files.

    A single file keeps its base name. Archives whose members all sit under
    one top-level directory are flattened by one level, so ``bot/main.py``
    and ``main.py`` both give ``main.py``.
    """
    if len(data) > limits.max_upload_bytes:
        raise ArchiveError(f"upload of {len(data)} bytes is over {limits.max_upload_bytes >> 20} MiB")
    if not data:
        raise ArchiveError("the upload is empty")
    dest.mkdir(parents=True, exist_ok=True)
    budget = _Budget(limits)
    try:
        _unpack(data, filename, dest, budget, limits)
        _flatten_single_directory(dest)
    except (OSError, ValueError) as exc:
        # What the checks above let through and the file system refuses: a
        # member that is a file and a directory at once, a name too long for
        # one path component. The upload is refused, with where it broke.
        where = Path(getattr(exc, "filename", None) or "").name
        raise ArchiveError(f"the archive cannot be unpacked: {getattr(exc, 'strerror', None) or exc}"
                           + (f" at {where[:60]!r}" if where else "")
                           + " (do two members share a name, or is a name over 255 bytes?)"
                           ) from None
    files = sorted(str(p.relative_to(dest)) for p in dest.rglob("*") if p.is_file())
    if not files:
        raise ArchiveError("the archive holds no files")
    return files


def _unpack(data: bytes, filename: str, dest: Path, budget: _Budget,
            limits: ArchiveLimits) -> None:
    kind = archive_kind(filename, data)
    if kind == "zip":
        _unpack_zip(data, dest, budget)
    elif kind == "tar":
        _unpack_tar(data, dest, budget)
    else:
        name = PurePosixPath(filename.replace("\\", "/")).name
        rel = safe_member_path(name, limits) if name not in ("", ".", "..") else None
        if rel is None or "\x00" in name:
            raise ArchiveError(f"file name {filename[:60]!r} is not usable: name the file "
                               "after its language (bot.py, bot.js, main.c)")
        budget.add_file(name)
        _write(dest, rel, io.BytesIO(data), budget, 0o755 if name.endswith(".sh") else 0o644)


def _flatten_single_directory(dest: Path) -> None:
    entries = list(dest.iterdir())
    if len(entries) == 1 and entries[0].is_dir() and not entries[0].is_symlink():
        inner = entries[0]
        holding = dest / (".unpack-" + inner.name)
        inner.rename(holding)
        for child in holding.iterdir():
            child.rename(dest / child.name)
        holding.rmdir()
