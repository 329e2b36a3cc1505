"""Memory limits that runtimes with big reservations can live under.

Go's runtime reserves hundreds of MiB of address space at start, Java 1 GiB
for its class space alone: an address-space limit (``RLIMIT_AS``) kills them
before they run a line, though they would use far less memory than allowed.
Without cgroups the sandbox limits the data segment instead, which counts
memory a program can write, not what it merely reserves.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from arena.hosting.sandbox import (Sandbox, SandboxLimits, SandboxSpec, python_mounts,
                                   sandbox_python)
from tests.hosting.conftest import needs_sandbox

pytestmark = needs_sandbox

# Go's runtime does this at start (its heap arenas and page summaries):
# reserve far more address space than it uses, with PROT_NONE.
RESERVES_LIKE_GO = r"""
#include <stdio.h>
#include <sys/mman.h>
int main(void) {
    void *p = mmap(0, 8UL << 30, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) { perror("failed to reserve page summary memory"); return 2; }
    puts("started");
    return 0;
}
"""


async def run(app: Path, command: list[str], limits: SandboxLimits = SandboxLimits()
              ) -> tuple[int, str]:
    log = app.parent / "out.log"
    with open(log, "wb") as out:
        sandbox = Sandbox(SandboxSpec(command=command, app_dir=app, mounts=python_mounts(),
                                      limits=limits), stderr=out.fileno())
        await sandbox.start()
    try:
        code = await sandbox.wait(60)
    finally:
        await sandbox.stop()
    return code, log.read_text(errors="replace")


async def test_without_cgroups_a_runtime_that_reserves_gigabytes_starts(
        tmp_path: Path, no_cgroups: None) -> None:
    app = tmp_path / "app"
    app.mkdir()
    (app / "go_like.c").write_text(RESERVES_LIKE_GO)
    subprocess.run(["cc", "-O2", "-o", str(app / "go_like"), str(app / "go_like.c")], check=True)
    code, out = await run(app, ["/bot/go_like"])
    assert code == 0 and "started" in out, out


@pytest.mark.skipif(shutil.which("java") is None, reason="no Java runtime on this machine")
async def test_without_cgroups_the_java_runtime_starts(tmp_path: Path, no_cgroups: None) -> None:
    app = tmp_path / "app"
    app.mkdir()
    code, out = await run(app, ["java", "-version"])
    assert code == 0 and "version" in out, out


async def test_without_cgroups_memory_is_still_bounded(tmp_path: Path, no_cgroups: None) -> None:
    app = tmp_path / "app"
    app.mkdir()
    (app / "eat.py").write_text("buffer = bytearray(1 << 30)\nprint('ate 1 GiB')\n")
    code, out = await run(app, [sandbox_python(), "/bot/eat.py"])
    assert code != 0 and "MemoryError" in out and "ate" not in out, out
