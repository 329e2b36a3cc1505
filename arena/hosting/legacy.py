"""Versions an older arena kept as files, brought into the store once.

Before the store held hosted versions (schema 6), each lived in
``hosted/<bot>/v<N>/`` beside a SQLite file: ``version.json``, the upload
in ``upload/``, the built bot in ``app/``, ``build.log`` and
``stderr/<match>.log``. The first server or command of a newer arena that
opens that store imports each under its own number (the ladder's history
and the standings per version keep their meaning), with its logs cut to
the caps of today, and renames the folder to its place in this node's build
cache, so a ready version plays without building again. A version the store
has already is left as it is.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import structlog

from arena.hosting.logs import LOG_CAP_BYTES, KEEP_STDERR
from arena.hosting.versions import BotVersion, BuildStatus, VersionStore, check_bot
from arena.hosting.errors import HostingError

log = structlog.get_logger("arena.hosting.legacy")


def _read_capped(path: Path) -> bytes:
    with open(path, "rb") as handle:
        return handle.read(LOG_CAP_BYTES)


def _legacy_folders(root: Path) -> list[Path]:
    """``<bot>/v<N>`` folders holding a ``version.json`` (the new layout's
    folders are ``v<N>-<hash>``)."""
    found = []
    for bot in sorted(p for p in root.iterdir() if p.is_dir()):
        for folder in sorted(bot.iterdir()):
            if folder.name[:1] == "v" and folder.name[1:].isdigit() \
                    and (folder / "version.json").is_file():
                found.append(folder)
    return found


def import_legacy(versions: VersionStore) -> list[tuple[str, int]]:
    """Import every version folder an older arena left in ``versions.root``;
    the (bot, version) imported. Reads files: call it off the event loop."""
    if not versions.root.is_dir():
        return []
    imported = []
    for folder in _legacy_folders(versions.root):
        try:
            version = BotVersion.from_wire(json.loads((folder / "version.json").read_text()))
            check_bot(version.bot)
        except (ValueError, TypeError, KeyError, HostingError) as exc:
            log.warning("legacy_version_unreadable", folder=str(folder), error=str(exc))
            continue
        uploads = sorted((folder / "upload").glob("*")) if (folder / "upload").is_dir() else []
        upload = uploads[0].read_bytes() if uploads else b""
        version.content_hash = hashlib.sha256(upload).hexdigest()
        if not versions.table.import_hosted_version(version.to_wire(), upload):
            continue
        if (folder / "build.log").is_file():
            versions.keep_build_log(version, _read_capped(folder / "build.log"))
        logs = sorted((folder / "stderr").glob("*.log"), key=lambda p: p.stat().st_mtime) \
            if (folder / "stderr").is_dir() else []
        for path in logs[-KEEP_STDERR:]:
            try:
                versions.keep_stderr(version.bot, version.version, path.stem, _read_capped(path))
            except HostingError:
                continue  # a name the store does not take: that log stays behind
        target = versions.local_dir(version)
        if not target.exists():
            os.rename(folder, target)  # the built bot plays on from the cache
            if version.status is BuildStatus.READY and (target / "app").is_dir():
                (target / "built").touch()
        imported.append((version.bot, version.version))
    if imported:
        log.info("legacy_versions_imported", count=len(imported), root=str(versions.root))
    return imported
