"""Chromium for the browser tests: where it is, how it starts, how long a
page may wait.

Every browser test launches Debian's chromium through playwright with the
same flags (no browser download; no background connections, which this
kind of machine refuses). Waits are bounds, not targets: a page waits for
a condition to hold and fails only if it never does, so the bounds are
generous and stretch with ``ARENA_TESTS_TIMEOUT_FACTOR`` (tests/timing.py)
on a loaded machine, where a whole arena, its bots and chromium share two
busy cores.
"""

from __future__ import annotations

import shutil
from typing import Any

import pytest

from tests.timing import FACTOR

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]

needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (scripts/install-browser installs it)")

# A page of a test server over a store the test filled: it shows at once.
WAIT_MS = int(10_000 * FACTOR)
# A page that waits on a running arena (seats filled, bots answering,
# matches played): under a loaded machine this took over 30 s.
PLAY_WAIT_MS = int(120_000 * FACTOR)


async def launch(playwright: Any) -> Any:
    """Chromium started as every browser test starts it."""
    return await playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)


async def play_context(browser: Any, **options: Any) -> Any:
    """A browser context whose pages wait up to :data:`PLAY_WAIT_MS`."""
    context = await browser.new_context(**options)
    context.set_default_timeout(PLAY_WAIT_MS)
    return context
