"""Reading an ``arena serve`` subprocess's ports from the line it prints
when it is ready (both ports are 0 on its command line)."""

from __future__ import annotations

import re
import select
import subprocess
import time
from pathlib import Path

_READY = re.compile(r"bots connect to [\d.]+:(\d+), web on http://[\d.]+:(\d+)/")


def served_ports(proc: subprocess.Popen[bytes], log_path: Path,
                 timeout_s: float = 60) -> tuple[int, int]:
    """(bot port, web port) from the server's stdout; fails with its log."""
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and proc.poll() is None:
        if select.select([proc.stdout], [], [], 0.2)[0]:
            match = _READY.search(proc.stdout.readline().decode())
            if match:
                return int(match.group(1)), int(match.group(2))
    raise AssertionError(log_path.read_text())
