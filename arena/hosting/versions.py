"""Versions of hosted bots: kept in the store, built into a local cache.

The store is the truth (:mod:`arena.storage.hosted_table`): every version's
record (status, reason, files, run command, validation result, matches),
its upload as sent, its build log and its stderr per match. Every node of
the store sees the same versions, numbered once per bot by the database.

What a node runs is built into its own cache folder (``cache``), one folder
per version and upload content::

    <cache>/<bot>/v<N>-<hash>/app/      the unpacked and built bot (read-only when playing)
    <cache>/<bot>/v<N>-<hash>/built     present once app/ is complete on this node
    <cache>/<bot>/v<N>-<hash>/work/     a build's own disk while it runs
    <cache>/<bot>/v<N>-<hash>/stderr/   a running match's stderr, until it is stored

The hash (of the upload) keeps a cache folder from ever being taken for
another upload of the same number (a store copied or restored elsewhere).
A node that is asked to play a version it has not built builds it from the
stored upload first (:func:`arena.hosting.builder.ensure_built`).

Every upload is a new version; the newest ``ready`` version is the one that
plays, earlier ones stay with their logs and results.
"""

from __future__ import annotations

import asyncio
import enum
import hashlib
import os
import re
import secrets
import shutil
import socket
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable

from arena.hosting.errors import HostingError
from arena.hosting.logs import KEEP_STDERR
from arena.storage.base import NotFoundError, Store
from arena.storage.hosted_table import HostedTable

_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,32}$")
_MATCH = re.compile(r"^[A-Za-z0-9_.:-]{1,80}$")
_CACHED = re.compile(r"^v\d+-[0-9a-f]{16}$")  # a cache folder (local_dir)
BUILD_LOG = "build.log"  # the build log's name among a version's logs
# How long a node's claim on a build lasts without renewal; the builder
# renews it every third of that, so only a node that died loses it.
BUILD_LEASE_S = 90.0
# A validation match is one match: a node that died in it leaves the
# version to another node's ladder after this long.
VALIDATION_LEASE_S = 600.0


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
    content_hash: str = ""  # SHA-256 of the upload (names its cache folder)

    @property
    def validated(self) -> bool:
        return bool(self.validation and self.validation.get("passed"))

    def to_wire(self) -> dict[str, object]:
        wire = asdict(self)
        wire["status"] = self.status.value
        return wire

    @classmethod
    def from_wire(cls, data: dict[str, object]) -> "BotVersion":
        fields = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        fields["status"] = BuildStatus(fields["status"])
        return cls(**fields)  # type: ignore[arg-type]


def _this_process() -> str:
    return f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(3)}"


class VersionStore:
    """Hosted versions in ``store``, built into the node-local ``cache``.

    Every method reads or writes the store or files: call them off the
    event loop (``asyncio.to_thread``)."""

    def __init__(self, store: Store, cache: Path, *, node: str | None = None) -> None:
        if not isinstance(store, HostedTable):
            raise HostingError(f"the store {type(store).__name__} keeps no hosted versions; "
                               "use SQLite or PostgreSQL")
        self.store = store
        self.table: HostedTable = store
        self.root = Path(cache)
        # Who claims builds: the store's node name (a restarted node takes its
        # own claims back at once), else this process alone.
        self.node = node or getattr(store, "node", None) or _this_process()
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
        """The bot is removed in the store (every node's ladder reads that)."""
        try:
            if not self.is_removed(bot):
                self.store.remove_bot(bot)
        except NotFoundError:
            pass  # never registered: nothing of it can play

    def is_removed(self, bot: str) -> bool:
        record = self.store.get_bot(check_bot(bot))
        return bool(record is not None and record.removed)

    # -- records ------------------------------------------------------------
    def new_version(self, bot: str, filename: str, lang: str | None,
                    upload: bytes = b"") -> BotVersion:
        """A new ``building`` version of ``bot`` holding ``upload``, numbered
        by the store (two nodes at once get two numbers)."""
        version = BotVersion(bot=check_bot(bot), version=0, lang=lang,
                             status=BuildStatus.BUILDING, created_at=time.time(),
                             filename=filename, content_hash=hashlib.sha256(upload).hexdigest())
        stored = self.table.add_hosted_version(_row(version), upload)
        version.version = int(stored["version"])
        return version

    def save(self, version: BotVersion) -> None:
        self.table.save_hosted_version(_row(version))

    def get(self, bot: str, version: int) -> BotVersion:
        row = self.table.hosted_version(check_bot(bot), version)
        if row is None:
            raise HostingError(f"bot {bot!r} has no version {version}")
        return _version(row)

    def versions(self, bot: str) -> list[BotVersion]:
        return [_version(r) for r in self.table.hosted_versions(check_bot(bot))]

    def active(self, bot: str) -> BotVersion | None:
        """The newest ready version: the one that plays (one indexed row)."""
        row = self.table.hosted_active(check_bot(bot))
        return None if row is None else _version(row)

    def ready_bots(self) -> list[BotVersion]:
        """The version that plays of every bot not removed (one query)."""
        return [_version(r) for r in self.table.hosted_ready()]

    def unfinished(self) -> list[BotVersion]:
        """Every version still ``building``."""
        return [_version(r) for r in self.table.hosted_building()]

    def upload(self, version: BotVersion) -> bytes:
        data = self.table.hosted_upload(version.bot, version.version)
        if data is None:
            raise HostingError(f"the store holds no upload of {version.bot} v{version.version}")
        return data

    def prune(self, bot: str, keep: int) -> list[int]:
        """Remove all but the ``keep`` newest versions of ``bot``, never the one
        that plays nor one still building; the numbers removed. This node's
        cache of them goes too (other nodes' at their next sweep)."""
        active = self.active(bot)
        found = self.versions(bot)
        newest = {v.version for v in found[-keep:]}
        gone = [v for v in found
                if v.version not in newest and not (active and v.version == active.version)
                and v.status is not BuildStatus.BUILDING]
        if gone:
            self.table.drop_hosted_versions(bot, [v.version for v in gone])
            for version in gone:
                shutil.rmtree(self.local_dir(version), ignore_errors=True)
        return [v.version for v in gone]

    def sweep_cache(self) -> list[Path]:
        """Remove this node's cache folders of versions the store no longer
        has (pruned on another node) or has under another upload; the
        folders removed. Reads folders: call it off the event loop."""
        if not self.root.is_dir():
            return []
        removed = []
        for bot_dir in sorted(self.root.iterdir()):
            if not bot_dir.is_dir() or not _NAME.match(bot_dir.name):
                continue
            kept = {self.local_dir(v).name for v in self.versions(bot_dir.name)}
            for folder in sorted(bot_dir.iterdir()):
                if _CACHED.match(folder.name) and folder.name not in kept \
                        and not os.path.ismount(folder / "work"):
                    shutil.rmtree(folder, ignore_errors=True)
                    removed.append(folder)
        return removed

    def record_validation(self, version: BotVersion, result: dict[str, object]) -> BotVersion:
        """Keep ``version``'s validation result; a failed one makes the version
        ``failed`` (with the match to replay), and the version that played
        before plays again (the newest ready one)."""
        record = self.get(version.bot, version.version)
        record.validation = result
        if not result.get("passed") and record.status is BuildStatus.READY:
            record.status = BuildStatus.FAILED
            match = result.get("match_id")
            record.reason = (f"validation match {match}: {result.get('reason')}" if match
                             else f"validation: {result.get('reason')}")
        self.save(record)
        return record

    def note_match(self, bot: str, version: int, match_id: str) -> None:
        self.table.note_hosted_match(bot, version, match_id)

    # -- builds -------------------------------------------------------------
    def claim_build(self, version: BotVersion) -> bool:
        """This node builds ``version`` (False: another node does, or it is done)."""
        return self.table.claim_hosted_build(version.bot, version.version, self.node,
                                             BUILD_LEASE_S)

    def claim_validation(self, version: BotVersion) -> bool:
        """This node plays ``version``'s validation match (False: another
        node does, or it was played)."""
        return self.table.claim_hosted_validation(version.bot, version.version, self.node,
                                                  VALIDATION_LEASE_S)

    # -- seats: a hosted bot plays one match of the store at a time -----------
    def claim_seat(self, bot: str, lease_s: float) -> bool:
        """This node seats ``bot`` (or renews its seat) for ``lease_s``
        seconds; False while another node has it seated."""
        return self.table.claim_hosted_seat(check_bot(bot), self.node, lease_s)

    def release_seat(self, bot: str) -> None:
        self.table.release_hosted_seat(check_bot(bot), self.node)

    def seated_elsewhere(self) -> set[str]:
        """The hosted bots another node of the store has seated now."""
        return self.table.hosted_seats_elsewhere(self.node)

    def release_build(self, version: BotVersion) -> None:
        self.table.release_hosted_build(version.bot, version.version, self.node)

    # -- logs -----------------------------------------------------------------
    def keep_build_log(self, version: BotVersion, data: bytes) -> None:
        self.table.keep_hosted_log(version.bot, version.version, BUILD_LOG, data)

    def build_log(self, bot: str, version: int) -> str:
        return (self.build_log_bytes(bot, version) or b"").decode(errors="replace")

    def build_log_bytes(self, bot: str, version: int) -> bytes | None:
        return self.table.hosted_log(check_bot(bot), version, BUILD_LOG)

    def keep_stderr(self, bot: str, version: int, match_id: str, data: bytes) -> None:
        """Keep a match's stderr (cut to its cap already); the version keeps
        its ``KEEP_STDERR`` newest."""
        self.table.keep_hosted_log(bot, version, stderr_name(match_id), data, keep=KEEP_STDERR)

    def stderr(self, bot: str, version: int, match_id: str) -> bytes | None:
        return self.table.hosted_log(check_bot(bot), version, stderr_name(match_id))

    # -- this node's cache --------------------------------------------------------
    def local_dir(self, version: BotVersion) -> Path:
        """This node's folder for ``version`` (pure: touches no file)."""
        return self.root / check_bot(version.bot) / \
            f"v{version.version}-{version.content_hash[:16] or 'none'}"

    def version_dir(self, bot: str, version: int) -> Path:
        """``local_dir`` of a version given by number (reads its record)."""
        return self.local_dir(self.get(bot, version))

    def is_built_here(self, version: BotVersion) -> bool:
        return (self.local_dir(version) / "built").is_file()

    def stderr_path(self, version: BotVersion, run_id: str) -> Path:
        """Where a run writes its stderr on this node until it is stored."""
        path = self.local_dir(version) / "stderr" / f"{stderr_name(run_id)[7:]}.log"
        path.parent.mkdir(parents=True, exist_ok=True)
        return path


def check_bot(bot: str) -> str:
    if not _NAME.match(bot):
        raise HostingError(f"bot name {bot!r} must be 1-32 characters of A-Z a-z 0-9 _ . -")
    return bot


def stderr_name(match_id: str) -> str:
    if not _MATCH.match(match_id):
        raise HostingError(f"bad match id {match_id!r}")
    return f"stderr/{match_id}"


def _row(version: BotVersion) -> dict[str, Any]:
    return version.to_wire()


def _version(row: dict[str, Any]) -> BotVersion:
    return BotVersion.from_wire(row)
