"""A version is ``ready`` only once its program started where it plays and
said hello; built is not enough."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

from arena.hosting.builder import BuildLimits, build, submit
from arena.hosting.versions import BuildStatus, VersionStore
from tests.hosting.conftest import needs_sandbox, versions_at

pytestmark = needs_sandbox

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bots"


def tar_of(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


async def submit_and_build(tmp_path: Path, data: bytes, filename: str,
                           limits: BuildLimits = BuildLimits()) -> tuple[VersionStore, object]:
    versions = versions_at(tmp_path)
    version = submit(versions, "bot", data, filename)
    return versions, await build(versions, version, limits)


async def test_a_bot_that_says_hello_is_ready(tmp_path: Path) -> None:
    data = (SAMPLES / "python_heuristic" / "bot.py").read_bytes()
    versions, version = await submit_and_build(tmp_path, data, "bot.py")
    assert version.status is BuildStatus.READY, versions.build_log("bot", 1)


async def test_a_program_that_builds_but_cannot_start_is_failed(tmp_path: Path) -> None:
    # Builds (compiles) fine; at start it needs more memory than play allows
    # (512 MiB; the build had 1 GiB), as a Go runtime did under the old limit.
    source = b"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(void) {
    char *p = malloc(900UL << 20);
    if (!p) { fputs("out of memory at start\\n", stderr); return 2; }
    memset(p, 1, 900UL << 20);
    puts("would connect now");
    return 0;
}
"""
    data = tar_of({"bot.c": source,
                   "arena-bot.toml": b'lang = "command"\nbuild = "cc -o bot bot.c"\nrun = "./bot"\n'})
    versions, version = await submit_and_build(tmp_path, data, "bot.tar.gz")
    assert version.status is BuildStatus.FAILED, versions.build_log("bot", 1)
    assert "did not start" in version.reason and "exited with code" in version.reason
    assert versions.active("bot") is None  # never the one that plays


async def test_a_program_that_never_says_hello_is_failed(tmp_path: Path) -> None:
    data = b"import time\ntime.sleep(60)\n"
    versions, version = await submit_and_build(tmp_path, data, "bot.py",
                                               BuildLimits(start_check_s=2))
    assert version.status is BuildStatus.FAILED
    assert "did not say hello within 2 s" in version.reason
    assert versions.active("bot") is None


async def test_a_program_that_sends_something_else_first_is_failed(tmp_path: Path) -> None:
    data = (b"import os, socket\n"
            b"s = socket.create_connection((os.environ['ARENA_HOST'], int(os.environ['ARENA_PORT'])))\n"
            b"s.sendall(b'{\"type\": \"action\"}\\n')\nimport time\ntime.sleep(30)\n")
    versions, version = await submit_and_build(tmp_path, data, "bot.py")
    assert version.status is BuildStatus.FAILED
    assert "first message was 'action', not hello" in version.reason


async def test_the_start_checks_stderr_is_in_the_build_log(tmp_path: Path) -> None:
    data = b"import sys\nprint('cannot find my model file', file=sys.stderr)\nsys.exit(4)\n"
    versions, version = await submit_and_build(tmp_path, data, "bot.py")
    assert version.status is BuildStatus.FAILED and "exited with code 4" in version.reason
    assert "cannot find my model file" in versions.build_log("bot", 1)
