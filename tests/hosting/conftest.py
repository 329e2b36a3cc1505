from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from arena.hosting.sandbox import Sandbox, SandboxLimits, SandboxSpec, python_mounts


def sandbox_available() -> str | None:
    """Why sandbox tests cannot run here, or None."""
    if shutil.which("bwrap") is None:
        return "bubblewrap is not installed (scripts/test installs it as root)"
    if os.geteuid() != 0:
        return "the sandbox needs root (it gives each bot a user id of its own)"
    return None


needs_sandbox = pytest.mark.skipif(sandbox_available() is not None,
                                   reason=sandbox_available() or "")


async def run_in_sandbox(app: Path, script: str, *, limits: SandboxLimits = SandboxLimits(),
                         timeout_s: float = 20.0, mounts=(),
                         started: list[Sandbox] | None = None) -> tuple[int, str]:
    """Run a Python snippet as a bot would run (the bot's files at /bot)."""
    app.mkdir(parents=True, exist_ok=True)
    (app / "probe.py").write_text(script)
    log = app.parent / f"{app.name}.log"
    spec = SandboxSpec(command=[sys.executable, "/bot/probe.py"], app_dir=app,
                       mounts=[*python_mounts(), *mounts], limits=limits)
    with open(log, "wb") as out:
        sandbox = Sandbox(spec, stderr=out.fileno())
        await sandbox.start()
    if started is not None:
        started.append(sandbox)
    try:
        code = await sandbox.wait(timeout_s)
    finally:
        await sandbox.stop()
    return code, log.read_text(errors="replace")
