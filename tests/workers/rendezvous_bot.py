"""A random bot whose first decision waits until copies of it connected to
``COUNT`` different servers (one per worker: each has its own port) have
reached theirs, so a test knows every worker holds a match at once instead
of hoping the first worker is not done before the second has started.

    python tests/workers/rendezvous_bot.py FOLDER COUNT

It waits at most ``WAIT_S`` (then plays on, and the test's own assertion
says what happened); the tournament's decision deadline must be longer.
"""

from __future__ import annotations

import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from protocol.sdk import run_bot  # noqa: E402

WAIT_S = 60.0


def main(folder: Path, count: int) -> None:
    waited = False

    def choose(phase: str, legal: list, state: dict):
        nonlocal waited
        if not waited:
            waited = True
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"port-{os.environ['ARENA_PORT']}").touch()
            deadline = time.monotonic() + WAIT_S
            while len(list(folder.glob("port-*"))) < count and time.monotonic() < deadline:
                time.sleep(0.02)
        return random.choice(legal)

    run_bot(choose, argv=[])


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(sys.argv[2]))
