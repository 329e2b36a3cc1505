"""Submitting and building a version: unpack, pick the preset, build in the sandbox."""

from __future__ import annotations

import asyncio
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import structlog

from arena.hosting.archive import ArchiveLimits, unpack_submission
from arena.hosting.errors import ArchiveError, BuildError, HostingError
from arena.hosting.logs import LOG_CAP_BYTES, cut_to_cap
from arena.hosting.presets import BotRecipe, interpreter_command, recipe_for
from arena.hosting.sandbox import (Mount, Sandbox, SandboxLimits, SandboxSpec, python_mounts,
                                   sandbox_python)
from arena.hosting.start_check import START_CHECK_SECONDS, check_start
from arena.hosting.uids import POOL
from arena.hosting.workspace import BuildDisk, clear_leftover
from arena.hosting.versions import BotVersion, BuildStatus, VersionStore

log = structlog.get_logger("arena.hosting.build")
RELAY = Path(__file__).with_name("relay.py")  # caps the build's output, as it does a bot's


@dataclass(frozen=True)
class BuildLimits:
    wall_seconds: float = 180.0
    memory_bytes: int = 1 << 30
    processes: int = 128
    tmp_bytes: int = 512 << 20  # npm's cache lives here during the build
    disk_bytes: int = 256 << 20  # what the build may leave in the bot's directory
    files: int = 20_000  # files and directories it may leave there
    start_check_s: float = START_CHECK_SECONDS  # to say hello in the play sandbox


def _plain_suffix(filename: str) -> str:
    name = filename.replace("\\", "/").rsplit("/", 1)[-1].lower()
    for suffix in (".tar.gz", ".tgz", ".tar", ".zip"):
        if name.endswith(suffix):
            return suffix
    suffix = Path(name).suffix if "\x00" not in name else ""
    return suffix if 1 < len(suffix) <= 8 and suffix[1:].isalnum() else ""


def submit(versions: VersionStore, bot: str, data: bytes, filename: str, *,
           lang: str | None = None, limits: ArchiveLimits = ArchiveLimits()) -> BotVersion:
    """Store an upload as a new version and unpack it (the build comes next).

    A refused archive still becomes a version — ``failed`` with the reason —
    so its owner sees what happened where every version is listed.
    """
    version = versions.new_version(bot, filename[:200], lang)
    directory = versions.version_dir(bot, version.version)
    upload = directory / "upload"
    upload.mkdir()
    # Kept under a name of ours: the sender's may be "..", 300 characters long
    # or hold a NUL byte. Only a short, plain suffix is carried over.
    (upload / ("upload" + _plain_suffix(filename))).write_bytes(data[: limits.max_upload_bytes])
    try:
        version.files = unpack_submission(data, filename, directory / "app", limits)
    except ArchiveError as exc:
        shutil.rmtree(directory / "app", ignore_errors=True)
        version.status, version.reason = BuildStatus.FAILED, str(exc)
        versions.save(version)
        log.info("submission_refused", bot=bot, version=version.version, reason=str(exc))
        return version
    versions.save(version)
    return version


async def build(versions: VersionStore, version: BotVersion,
                limits: BuildLimits = BuildLimits()) -> BotVersion:
    """Build ``version`` in the sandbox; it ends ``ready`` or ``failed``.

    The build writes into a disk of its own (:mod:`.workspace`): bounded in
    bytes and files, copied back clean when it is done. Its log is cut at
    ``LOG_CAP_BYTES``. Nothing here walks the bot's files on the loop.
    """
    key = (version.bot, version.version)
    if version.status is not BuildStatus.BUILDING or key in _BUILDING:
        return version
    _BUILDING.add(key)
    try:
        return await _build(versions, version, limits)
    finally:
        _BUILDING.discard(key)


_BUILDING: set[tuple[str, int]] = set()  # (bot, version) being built in this process


async def _build(versions: VersionStore, version: BotVersion, limits: BuildLimits) -> BotVersion:
    directory = versions.version_dir(version.bot, version.version)
    app = directory / "app"
    log_path = directory / "build.log"
    started = time.monotonic()
    log_file = await asyncio.to_thread(open, log_path, "wb")
    try:
        recipe = await asyncio.to_thread(recipe_for, app, version.lang)
        version.lang, version.game = recipe.lang, recipe.game
        if recipe.build:
            lease = POOL.lease()  # one user id over every step, owning the build's disk
            try:
                async with BuildDisk(directory / "work", limits.disk_bytes, limits.files,
                                     lease.uid) as disk:
                    await disk.fill_from(app)
                    for step in recipe.build:
                        code = await _run_step(disk.path, recipe, step, log_file, limits,
                                               lease.uid)
                        disk.check()  # a full disk explains a failed step best
                        if code != 0:
                            raise BuildError(f"the build step {' '.join(step)!r} exited with "
                                             f"code {code} (see the build log)")
                    await disk.copy_out(app)
            finally:
                lease.release()
        version.run = recipe.run
        # Built is not ready: it must start where it plays, under the play
        # sandbox's limits (smaller than the build's), and say hello.
        check = await check_start(version, app, timeout_s=limits.start_check_s)
        if not check.said_hello:
            log_file.write(b"\n$ start check (" + " ".join(recipe.run).encode() + b")\n"
                           + check.stderr_tail)
            raise BuildError(check.reason or "the bot did not start")
        version.status = BuildStatus.READY
    except BuildError as exc:
        version.status, version.reason = BuildStatus.FAILED, str(exc)
        log_file.write(f"\nbuild failed: {exc}\n".encode())
    except HostingError as exc:
        version.status, version.reason = BuildStatus.FAILED, f"sandbox: {exc}"
    finally:
        log_file.close()
    await asyncio.to_thread(cut_to_cap, log_path)
    version.built_at = time.time()
    version.build_seconds = round(time.monotonic() - started, 3)
    await asyncio.to_thread(versions.save, version)
    log.info("build_finished", bot=version.bot, version=version.version,
             status=version.status.value, seconds=version.build_seconds, reason=version.reason)
    return version


async def _run_step(work: Path, recipe: BotRecipe, step: list[str], log_file: BinaryIO,
                    limits: BuildLimits, uid: int) -> int:
    """One build step in the sandbox; its exit code. Its output (stdout and
    stderr) reaches the log through the relay, which keeps the first
    ``LOG_CAP_BYTES``."""
    log_file.write(f"$ {' '.join(step)}\n".encode())
    log_file.flush()
    capped = [sandbox_python(), "-I", "/arena/relay.py", "--build",
              "--log-cap", str(LOG_CAP_BYTES), "--"]
    spec = SandboxSpec(command=[*capped, *interpreter_command(step)], app_dir=work,
                       app_writable=True,
                       mounts=[*python_mounts(), Mount(RELAY, "/arena/relay.py")],
                       limits=SandboxLimits(memory_bytes=limits.memory_bytes,
                                            processes=limits.processes,
                                            tmp_bytes=limits.tmp_bytes, cpu_seconds=600))
    sandbox = Sandbox(spec, stderr=log_file.fileno(), uid=uid)
    await sandbox.start()
    try:
        return await sandbox.wait(limits.wall_seconds)
    except TimeoutError:
        raise BuildError(f"the build step {step[0]!r} took longer than "
                         f"{limits.wall_seconds:g} s and was stopped") from None
    finally:
        await sandbox.stop()


async def submit_and_build(versions: VersionStore, bot: str, data: bytes, filename: str, *,
                           lang: str | None = None) -> BotVersion:
    version = submit(versions, bot, data, filename, lang=lang)
    return await build(versions, version)


def run_build_sync(versions: VersionStore, version: BotVersion) -> BotVersion:
    return asyncio.run(build(versions, version))


async def recover_unfinished(versions: VersionStore,
                             before: float | None = None) -> list[BotVersion]:
    """Versions left ``building`` by an arena that stopped (or by ``arena bots
    submit --no-build``) are built now, one at a time; one whose upload was
    never unpacked is ``failed``, to be uploaded again. Called when a server
    with hosted bots starts (``before``: its start; later uploads have their
    own builds); returns what it finished."""
    finished = []
    for version in await asyncio.to_thread(versions.unfinished):
        if before is not None and version.created_at >= before:
            continue
        if (version.bot, version.version) in _BUILDING:
            continue
        directory = versions.version_dir(version.bot, version.version)
        await clear_leftover(directory / "work")
        if not await asyncio.to_thread((directory / "app").is_dir):
            version.status = BuildStatus.FAILED
            version.reason = "the arena stopped before this upload was unpacked; upload it again"
            await asyncio.to_thread(versions.save, version)
        else:
            log.info("build_resumed", bot=version.bot, version=version.version)
            version = await build(versions, version)
        finished.append(version)
    return finished
