"""Building a version on this node: unpack its upload, run its recipe.

Both the one build that decides a version's status (:mod:`.builder`) and a
node that must play a version built elsewhere (:func:`ensure_built`) come
here: the upload is read from the store, unpacked into this node's cache
folder, and the recipe's build steps run in the sandbox on a disk of their
own. Nothing here walks the bot's files on the event loop.
"""

from __future__ import annotations

import asyncio
import shutil
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
from arena.hosting.uids import POOL
from arena.hosting.versions import BotVersion, VersionStore
from arena.hosting.workspace import BuildDisk, clear_leftover

log = structlog.get_logger("arena.hosting.build")
RELAY = Path(__file__).with_name("relay.py")  # caps the build's output, as it does a bot's
# How long a built version has to say hello (arena.hosting.start_check):
# generous, a JVM on a loaded 2-core machine takes seconds.
START_CHECK_SECONDS = 20.0


@dataclass(frozen=True)
class BuildLimits:
    wall_seconds: float = 180.0
    memory_bytes: int = 1 << 30
    processes: int = 128
    tmp_bytes: int = 512 << 20  # npm's cache lives here during the build
    disk_bytes: int = 256 << 20  # what the build may leave in the bot's directory
    files: int = 20_000  # files and directories it may leave there
    start_check_s: float = START_CHECK_SECONDS  # to say hello in the play sandbox


def unpack_here(directory: Path, data: bytes, filename: str,
                 limits: ArchiveLimits = ArchiveLimits()) -> list[str]:
    """(a worker thread) A fresh ``app`` in ``directory`` from the upload;
    the ``unpacked`` mark says it is complete and not built yet."""
    shutil.rmtree(directory / "app", ignore_errors=True)
    for mark in ("built", "unpacked"):
        (directory / mark).unlink(missing_ok=True)
    directory.mkdir(parents=True, exist_ok=True)
    files = unpack_submission(data, filename, directory / "app", limits)
    (directory / "unpacked").touch()
    return files


def unpack_stored(versions: VersionStore, version: BotVersion, directory: Path) -> None:
    """(a worker thread) ``app`` from the upload in the store, unless this
    node unpacked it already and nothing built over it since."""
    if (directory / "unpacked").is_file():
        return
    try:
        unpack_here(directory, versions.upload(version), version.filename)
    except (ArchiveError, HostingError) as exc:
        raise BuildError(f"the stored upload cannot be unpacked: {exc}") from None


async def run_recipe(directory: Path, lang: str | None, log_file: BinaryIO,
                limits: BuildLimits) -> BotRecipe:
    """Run the recipe's build steps over ``directory/app``; the recipe."""
    app = directory / "app"
    (directory / "unpacked").unlink(missing_ok=True)  # app is the build's from here on
    recipe = await asyncio.to_thread(recipe_for, app, lang)
    if recipe.build:
        lease = POOL.lease()  # one user id over every step, owning the build's disk
        try:
            async with BuildDisk(directory / "work", limits.disk_bytes, limits.files,
                                 lease.uid) as disk:
                await disk.fill_from(app)
                for step in recipe.build:
                    code = await _run_step(disk.path, recipe, step, log_file, limits, lease.uid)
                    disk.check()  # a full disk explains a failed step best
                    if code != 0:
                        raise BuildError(f"the build step {' '.join(step)!r} exited with "
                                         f"code {code} (see the build log)")
                await disk.copy_out(app)
        finally:
            lease.release()
    return recipe


async def ensure_built(versions: VersionStore, version: BotVersion,
                       limits: BuildLimits = BuildLimits()) -> Path:
    """This node's built ``app`` folder of a ready ``version``, built here
    from the stored upload first if this node never built it (the version
    was built on another node of the store). Raises HostingError when it
    cannot be built here."""
    directory = versions.local_dir(version)
    if await asyncio.to_thread(versions.is_built_here, version):
        return directory / "app"
    lock = _LOCAL.setdefault((version.bot, version.version), asyncio.Lock())
    async with lock:
        if await asyncio.to_thread(versions.is_built_here, version):
            return directory / "app"
        log.info("local_build", bot=version.bot, version=version.version)
        await clear_leftover(directory / "work")
        log_path = directory / "local-build.log"
        try:
            await asyncio.to_thread(unpack_stored, versions, version, directory)
            with await asyncio.to_thread(open, log_path, "wb") as log_file:
                await run_recipe(directory, version.lang, log_file, limits)
        except BuildError as exc:
            raise HostingError(f"{version.bot} v{version.version} could not be built on this "
                               f"node: {exc}") from None
        finally:
            await asyncio.to_thread(cut_to_cap, log_path)
        await asyncio.to_thread((directory / "built").touch)
    return directory / "app"


_LOCAL: dict[tuple[str, int], asyncio.Lock] = {}  # one local build per version at a time


async def _run_step(work: Path, recipe: BotRecipe, step: list[str], log_file: BinaryIO,
                    limits: BuildLimits, uid: int) -> int:
    """One build step in the sandbox; its exit code. Its output (stdout and
    stderr) reaches the log through the relay, which keeps the first
    ``LOG_CAP_BYTES``."""
    # The preset's variables are shown with the command, as a shell would
    # run it: an author reading the log sees that the build is offline.
    shown = [f"{key}={value}" for key, value in recipe.build_env.items()]
    log_file.write(f"$ {' '.join(shown + step)}\n".encode())
    log_file.flush()
    capped = [sandbox_python(), "-I", "/arena/relay.py", "--build",
              "--log-cap", str(LOG_CAP_BYTES), "--"]
    spec = SandboxSpec(command=[*capped, *interpreter_command(step)], app_dir=work,
                       app_writable=True, env=dict(recipe.build_env),
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


