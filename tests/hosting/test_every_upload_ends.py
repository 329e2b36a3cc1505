"""Every upload ends ``ready`` or ``failed`` with a reason: hostile names and
archives, a server stopped mid-build, an upload stored without a build."""

from __future__ import annotations

import asyncio
import shutil
import os
import io
import zipfile
from pathlib import Path

import pytest

from arena.hosting.builder import build, recover_unfinished, submit
from arena.hosting.versions import BuildStatus, VersionStore
from tests.hosting.conftest import SAYS_HELLO, needs_sandbox, versions_at

BOT = (SAYS_HELLO + "import time\ntime.sleep(1)\n").encode()


def zip_of(entries: list[tuple[str, bytes | None]]) -> bytes:
    """Entries in order; None makes a directory entry."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in entries:
            if data is None:
                archive.writestr(zipfile.ZipInfo(name.rstrip("/") + "/"), b"")
            else:
                archive.writestr(name, data)
    return buffer.getvalue()


@pytest.mark.parametrize("filename", ["..", ".", "/", "x" * 300 + ".py", "a/" + "b" * 255,
                                      "bot\x00.py", ""])
def test_a_hostile_file_name_is_a_failed_version_not_a_crash(tmp_path: Path,
                                                             filename: str) -> None:
    version = submit(versions_at(tmp_path), "bot", BOT, filename)
    assert version.status in (BuildStatus.FAILED, BuildStatus.BUILDING)
    if version.status is BuildStatus.FAILED:
        assert version.reason


@pytest.mark.parametrize("entries", [
    [("bot.py", BOT), ("bot.py/", None)],
    [("d", b"x"), ("d/bot.py", BOT)],
    [("d/bot.py", BOT), ("d", b"x")],
    [("n" * 300, b"x")],
])
def test_an_archive_with_colliding_or_overlong_names_is_a_failed_version(
        tmp_path: Path, entries: list[tuple[str, bytes | None]]) -> None:
    version = submit(versions_at(tmp_path), "bot", zip_of(entries), "bot.zip")
    assert version.status is BuildStatus.FAILED and version.reason


@needs_sandbox
async def test_versions_left_building_are_built_when_the_arena_starts(tmp_path: Path) -> None:
    versions = versions_at(tmp_path)
    stored = submit(versions, "bot", BOT, "bot.py")  # as `arena bots submit --no-build`
    assert stored.status is BuildStatus.BUILDING
    await recover_unfinished(versions)
    assert versions.get("bot", stored.version).status is BuildStatus.READY


@needs_sandbox
async def test_a_build_stopped_half_way_is_built_again_on_restart(tmp_path: Path) -> None:
    versions = versions_at(tmp_path)
    stored = submit(versions, "bot", BOT, "bot.py")
    task = asyncio.get_running_loop().create_task(build(versions, stored))
    await asyncio.sleep(0.05)
    task.cancel()  # the server stops
    await asyncio.gather(task, return_exceptions=True)
    assert versions.get("bot", stored.version).status is BuildStatus.BUILDING
    work = versions.local_dir(stored) / "work"
    assert not os.path.ismount(work)  # the build's own disk went with it
    await recover_unfinished(versions)
    assert versions.get("bot", stored.version).status is BuildStatus.READY


@needs_sandbox
async def test_a_version_whose_local_files_are_gone_is_built_from_the_stored_upload(
        tmp_path: Path) -> None:
    versions = versions_at(tmp_path)
    stored = submit(versions, "bot", BOT, "bot.py")
    shutil.rmtree(versions.local_dir(stored))  # another node stored it, or the cache was wiped
    await recover_unfinished(versions)
    after = versions.get("bot", stored.version)
    assert after.status is BuildStatus.READY, after.reason
    assert (versions.local_dir(after) / "app" / "bot.py").read_bytes() == BOT
