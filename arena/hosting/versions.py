"""Versions of hosted bots, kept on disk beside the store.

Layout under the hosting root (``<store directory>/hosted``)::

    <bot>/v<N>/version.json   status, language, times, reason of a failure
    <bot>/v<N>/upload/<name>  the upload as sent
    <bot>/v<N>/app/           the unpacked and built bot (read-only when playing)
    <bot>/v<N>/build.log      everything the build printed
    <bot>/v<N>/stderr/<match>.log   what the bot wrote to stderr in each match
    <bot>/active              the number of the version that plays (newest ready)
    <bot>/removed             present once the bot was removed: it never plays again

Every upload is a new version; the newest ``ready`` version is the one that
plays, earlier ones stay with their logs and results.
"""

from __future__ import annotations

import asyncio
import enum
import json
import os
import re
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Awaitable, Callable

from arena.hosting.errors import HostingError

_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,32}$")
_MATCH = re.compile(r"^[A-Za-z0-9_.:-]{1,80}$")


class BuildStatus(str, enum.Enum):
    BUILDING = "building"
    READY = "ready"
    FAILED = "failed"


@dataclass
class BotVersion:
    bot: str
    version: int
    lang: str | None
    status: BuildStatus
    created_at: float
    filename: str
    files: list[str] = field(default_factory=list)
    built_at: float | None = None
    build_seconds: float | None = None
    reason: str | None = None  # why the build failed, in a sentence
    run: list[str] = field(default_factory=list)
    matches: list[str] = field(default_factory=list)
    game: str = "muushig"  # the game it plays (arena-bot.toml's ``game``)
    # Its validation match (arena.hosting.validation.ValidationResult's wire
    # form) once played; None while it waits: the ladder seats it only after.
    validation: dict[str, object] | None = None

    @property
    def validated(self) -> bool:
        return bool(self.validation and self.validation.get("passed"))

    def to_wire(self) -> dict[str, object]:
        wire = asdict(self)
        wire["status"] = self.status.value
        return wire

    @classmethod
    def from_wire(cls, data: dict[str, object]) -> "BotVersion":
        fields = dict(data)
        fields["status"] = BuildStatus(fields["status"])
        return cls(**fields)  # type: ignore[arg-type]


class VersionStore:
    """Reads and writes the version directories of every hosted bot."""

    def __init__(self, root: Path) -> None:
        self.root = root
        # Called with (bot, removed) when a bot is removed or its token rotated:
        # whatever runs its code stops (HostedBots registers itself here).
        self.on_retire: list[Callable[[str, bool], Awaitable[None]]] = []

    async def retire(self, bot: str, *, removed: bool) -> None:
        """The bot was removed (for good) or its token rotated: stop its code now."""
        if removed:
            await asyncio.to_thread(self.mark_removed, bot)
        for hook in list(self.on_retire):
            await hook(bot, removed)

    def mark_removed(self, bot: str) -> None:
        directory = self.bot_dir(bot)
        if directory.is_dir():
            (directory / "removed").touch()

    def is_removed(self, bot: str) -> bool:
        return (self.bot_dir(bot) / "removed").exists()

    def bot_dir(self, bot: str) -> Path:
        if not _NAME.match(bot):
            raise HostingError(f"bot name {bot!r} must be 1-32 characters of A-Z a-z 0-9 _ . -")
        return self.root / bot

    def version_dir(self, bot: str, version: int) -> Path:
        return self.bot_dir(bot) / f"v{version}"

    def new_version(self, bot: str, filename: str, lang: str | None) -> BotVersion:
        directory = self.bot_dir(bot)
        directory.mkdir(parents=True, exist_ok=True)
        number = max((v.version for v in self.versions(bot)), default=0) + 1
        while True:  # mkdir is the lock: two uploads at once get two numbers
            try:
                (directory / f"v{number}").mkdir()
                break
            except FileExistsError:
                number += 1
        version = BotVersion(bot=bot, version=number, lang=lang, status=BuildStatus.BUILDING,
                             created_at=time.time(), filename=filename)
        self.save(version)
        return version

    def save(self, version: BotVersion) -> None:
        path = self.version_dir(version.bot, version.version) / "version.json"
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(version.to_wire(), indent=1))
        os.replace(tmp, path)
        if version.status is BuildStatus.READY:
            active = self._active_number(version.bot)
            if active is None or active < version.version:
                self._write_active(version.bot, version.version)

    def _active_number(self, bot: str) -> int | None:
        try:
            return int((self.bot_dir(bot) / "active").read_text())
        except (FileNotFoundError, ValueError):
            return None

    def _write_active(self, bot: str, number: int) -> None:
        path = self.bot_dir(bot) / "active"
        tmp = path.with_suffix(".tmp")
        tmp.write_text(str(number))
        os.replace(tmp, path)

    def get(self, bot: str, version: int) -> BotVersion:
        path = self.version_dir(bot, version) / "version.json"
        try:
            return BotVersion.from_wire(json.loads(path.read_text()))
        except FileNotFoundError:
            raise HostingError(f"bot {bot!r} has no version {version}") from None

    def versions(self, bot: str) -> list[BotVersion]:
        directory = self.bot_dir(bot)
        if not directory.is_dir():
            return []
        found = []
        for child in directory.iterdir():
            if child.name.startswith("v") and child.name[1:].isdigit() \
                    and (child / "version.json").is_file():
                found.append(self.get(bot, int(child.name[1:])))
        return sorted(found, key=lambda v: v.version)

    def prune(self, bot: str, keep: int) -> list[int]:
        """Remove all but the ``keep`` newest versions of ``bot``, never the one
        that plays nor one still building; the numbers removed. Walks files:
        call it off the event loop."""
        active = self.active(bot)
        found = self.versions(bot)
        newest = {v.version for v in found[-keep:]}
        removed = []
        for version in found:
            if version.version in newest or (active and version.version == active.version) \
                    or version.status is BuildStatus.BUILDING:
                continue
            shutil.rmtree(self.version_dir(bot, version.version), ignore_errors=True)
            removed.append(version.version)
        return removed

    def unfinished(self) -> list[BotVersion]:
        """Every version still ``building`` (reads every version: at start only)."""
        return [v for bot in self.bots() for v in self.versions(bot)
                if v.status is BuildStatus.BUILDING]

    def bots(self) -> list[str]:
        if not self.root.is_dir():
            return []
        return sorted(p.name for p in self.root.iterdir() if p.is_dir() and _NAME.match(p.name))

    def active(self, bot: str) -> BotVersion | None:
        """The newest ready version: the one that plays. One small file is
        read (not every version's), so the ladder's cost does not grow with
        a bot's history; a bot from before that file is scanned once."""
        number = self._active_number(bot)
        if number is not None:
            try:
                found = self.get(bot, number)
                if found.status is BuildStatus.READY:
                    return found
            except HostingError:
                pass  # its directory was pruned: scan
        ready = [v for v in self.versions(bot) if v.status is BuildStatus.READY]
        if ready:
            self._write_active(bot, ready[-1].version)
        return ready[-1] if ready else None

    def ready_bots(self) -> list[BotVersion]:
        """The version that plays of every bot not removed (reads files: call
        it off the event loop)."""
        found = []
        for bot in self.bots():
            if self.is_removed(bot):
                continue
            version = self.active(bot)
            if version is not None:
                found.append(version)
        return found

    def build_log(self, bot: str, version: int) -> str:
        path = self.version_dir(bot, version) / "build.log"
        return path.read_text(errors="replace") if path.is_file() else ""

    def stderr_file(self, bot: str, version: int, match_id: str) -> Path:
        """Where the stderr of ``match_id`` is kept (pure: touches no file)."""
        if not _MATCH.match(match_id):
            raise HostingError(f"bad match id {match_id!r}")
        return self.version_dir(bot, version) / "stderr" / f"{match_id}.log"

    def stderr_path(self, bot: str, version: int, match_id: str) -> Path:
        """``stderr_file``, its directory made (for writing)."""
        path = self.stderr_file(bot, version, match_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    def record_validation(self, version: BotVersion, result: dict[str, object]) -> BotVersion:
        """Keep ``version``'s validation result; a failed one makes the version
        ``failed`` (with the match to replay), and the version that played
        before plays again."""
        record = self.get(version.bot, version.version)
        record.validation = result
        if not result.get("passed") and record.status is BuildStatus.READY:
            record.status = BuildStatus.FAILED
            match = result.get("match_id")
            record.reason = (f"validation match {match}: {result.get('reason')}" if match
                             else f"validation: {result.get('reason')}")
        self.save(record)
        if record.status is BuildStatus.FAILED and self._active_number(record.bot) == record.version:
            ready = [v for v in self.versions(record.bot) if v.status is BuildStatus.READY]
            if ready:
                self._write_active(record.bot, ready[-1].version)
            else:
                (self.bot_dir(record.bot) / "active").unlink(missing_ok=True)
        return record

    def note_match(self, bot: str, version: int, match_id: str) -> None:
        record = self.get(bot, version)
        if match_id not in record.matches:
            record.matches.append(match_id)
            self.save(record)
