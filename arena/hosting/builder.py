"""Submitting and building a version: store the upload, unpack it, build it
once (one node of the store, under a claim), check that it starts.

The build steps themselves, shared with a node that builds a version it
did not build first, are in :mod:`.local_build`.
"""

from __future__ import annotations

import asyncio
import shutil
import time
from pathlib import Path

import structlog

from arena.hosting.archive import ArchiveLimits
from arena.hosting.errors import ArchiveError, BuildError, HostingError
from arena.hosting.local_build import (
    BuildLimits,
    run_recipe,
    unpack_here,
    unpack_stored,
    ensure_built,
)
from arena.hosting.logs import cut_to_cap
from arena.hosting.start_check import check_start
from arena.hosting.versions import BUILD_LEASE_S, BotVersion, BuildStatus, VersionStore
from arena.hosting.workspace import clear_leftover

__all__ = ["BuildLimits", "build", "ensure_built", "recover_unfinished", "submit",
           "submit_and_build"]

log = structlog.get_logger("arena.hosting.build")


def submit(versions: VersionStore, bot: str, data: bytes, filename: str, *,
           lang: str | None = None, limits: ArchiveLimits = ArchiveLimits()) -> BotVersion:
    """Store an upload as a new version and unpack it here (the build comes
    next, on this node or any other of the store).

    A refused archive still becomes a version — ``failed`` with the reason —
    so its owner sees what happened where every version is listed. Reads
    and writes the store and files: call it off the event loop.
    """
    # Kept under the sender's name only as a record: the files are unpacked
    # under names of ours, and a long, odd or NUL-holding name is harmless.
    version = versions.new_version(bot, filename[:200], lang, data[: limits.max_upload_bytes])
    directory = versions.local_dir(version)
    try:
        version.files = unpack_here(directory, data, version.filename, limits)
    except ArchiveError as exc:
        shutil.rmtree(directory, ignore_errors=True)
        version.status, version.reason = BuildStatus.FAILED, str(exc)
        versions.save(version)
        log.info("submission_refused", bot=bot, version=version.version, reason=str(exc))
        return version
    versions.save(version)
    return version


async def build(versions: VersionStore, version: BotVersion,
                limits: BuildLimits = BuildLimits()) -> BotVersion:
    """Build ``version`` in the sandbox; it ends ``ready`` or ``failed``.

    One node builds a version: this one claims it in the store first, and
    if another node holds the claim returns the record as stored (that node
    finishes it). The build writes into a disk of its own
    (:mod:`.workspace`): bounded in bytes and files, copied back clean when
    it is done. Its log is cut at ``LOG_CAP_BYTES`` and kept in the store.
    Nothing here walks the bot's files on the loop.
    """
    key = (version.bot, version.version)
    if version.status is not BuildStatus.BUILDING or key in _BUILDING:
        return version
    _BUILDING.add(key)
    try:
        if not await asyncio.to_thread(versions.claim_build, version):
            log.info("build_claimed_elsewhere", bot=version.bot, version=version.version)
            return await asyncio.to_thread(versions.get, version.bot, version.version)
        renewal = asyncio.get_running_loop().create_task(_keep_claim(versions, version))
        try:
            return await _build(versions, version, limits)
        finally:
            renewal.cancel()
            if version.status is BuildStatus.BUILDING:  # cancelled: anyone may build it
                try:
                    await asyncio.shield(asyncio.to_thread(versions.release_build, version))
                except Exception as exc:  # noqa: BLE001 - the claim then runs out by itself
                    log.warning("build_claim_not_released", bot=version.bot, error=str(exc))
    finally:
        _BUILDING.discard(key)


_BUILDING: set[tuple[str, int]] = set()  # (bot, version) being built in this process


async def _keep_claim(versions: VersionStore, version: BotVersion) -> None:
    """Renew this node's claim on the build while it runs."""
    while True:
        await asyncio.sleep(BUILD_LEASE_S / 3)
        if not await asyncio.to_thread(versions.claim_build, version):
            log.warning("build_claim_lost", bot=version.bot, version=version.version)
            return


async def _build(versions: VersionStore, version: BotVersion, limits: BuildLimits) -> BotVersion:
    directory = versions.local_dir(version)
    app = directory / "app"
    log_path = directory / "build.log"
    started = time.monotonic()
    await clear_leftover(directory / "work")  # a build this node left half-way
    log_file = None
    try:
        await asyncio.to_thread(unpack_stored, versions, version, directory)
        log_file = await asyncio.to_thread(open, log_path, "wb")
        recipe = await run_recipe(directory, version.lang, log_file, limits)
        version.lang, version.game = recipe.lang, recipe.game
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
        if log_file is not None:
            log_file.write(f"\nbuild failed: {exc}\n".encode())
    except HostingError as exc:
        version.status, version.reason = BuildStatus.FAILED, f"sandbox: {exc}"
    finally:
        if log_file is not None:
            log_file.close()
    version.built_at = time.time()
    version.build_seconds = round(time.monotonic() - started, 3)
    await asyncio.to_thread(_finish, versions, version, log_path)
    log.info("build_finished", bot=version.bot, version=version.version,
             status=version.status.value, seconds=version.build_seconds, reason=version.reason)
    return version


def _finish(versions: VersionStore, version: BotVersion, log_path: Path) -> None:
    """(a worker thread) The build log, cut to its cap, and the record go to
    the store; a ready version is marked built on this node."""
    cut_to_cap(log_path)
    try:
        versions.keep_build_log(version, log_path.read_bytes())
    except FileNotFoundError:
        pass
    versions.save(version)
    if version.status is BuildStatus.READY:
        (log_path.parent / "built").touch()


async def submit_and_build(versions: VersionStore, bot: str, data: bytes, filename: str, *,
                           lang: str | None = None) -> BotVersion:
    version = submit(versions, bot, data, filename, lang=lang)
    return await build(versions, version)


def run_build_sync(versions: VersionStore, version: BotVersion) -> BotVersion:
    return asyncio.run(build(versions, version))


async def recover_unfinished(versions: VersionStore,
                             before: float | None = None) -> list[BotVersion]:
    """Versions left ``building`` (by a node that stopped or died, or by
    ``arena bots submit --no-build``) are built now, one at a time, from
    their stored uploads; one another node is building (its claim is live)
    is left to it. Called when a server with hosted bots starts and then
    now and again (``before``: only versions stored before then); returns
    what it finished."""
    finished = []
    for version in await asyncio.to_thread(versions.unfinished):
        if before is not None and version.created_at >= before:
            continue
        if (version.bot, version.version) in _BUILDING:
            continue
        log.info("build_resumed", bot=version.bot, version=version.version)
        version = await build(versions, version)
        if version.status is not BuildStatus.BUILDING:
            finished.append(version)
    return finished
