"""File descriptors of a serving process: as many as allowed, and a quiet
log when they run out anyway.

Every connection holds a descriptor. Many systems start processes with a
soft limit of 1,024 and a far higher hard limit that any process may raise
itself to, so ``arena serve`` raises it at start. When the descriptors do
run out, asyncio's accept loop reports every failed ``accept()`` (about once
a second per listening socket, each with a traceback); those reports are
folded into one log line a minute with their count.
"""

from __future__ import annotations

import asyncio
import resource
import time
from typing import Any

import structlog

from arena.server.retry import LogThrottle

log = structlog.get_logger("arena.server")

_ACCEPT_FAILED = "socket.accept() out of system resource"


def raise_open_files_limit() -> tuple[int, int]:
    """Raise the soft RLIMIT_NOFILE to the hard limit; (before, after)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft >= hard:
        return soft, soft
    target = hard
    if hard == resource.RLIM_INFINITY:  # some systems refuse infinity: take a large number
        target = max(soft, 1 << 20) if soft != resource.RLIM_INFINITY else soft
    for wanted in (target, 1 << 20, 1 << 16):
        if wanted <= soft:
            break
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
            return soft, wanted
        except (ValueError, OSError):
            continue
    return soft, soft


class AcceptErrorThrottle:
    """A loop exception handler: failed accepts logged at most once per
    ``every_s`` (with how many there were); anything else as before."""

    def __init__(self, every_s: float = 60.0) -> None:
        self._throttle = LogThrottle(every_s=every_s)
        self.failures = 0

    def __call__(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if context.get("message") != _ACCEPT_FAILED:
            loop.default_exception_handler(context)
            return
        self.failures += 1
        held_back = self._throttle.allow(time.monotonic())
        if held_back is not None:
            exc = context.get("exception")
            log.error("accept_failed", cause=f"{type(exc).__name__}: {exc}" if exc else None,
                      failures=self.failures, not_logged=held_back,
                      open_files_limit=resource.getrlimit(resource.RLIMIT_NOFILE)[0])


def quiet_accept_errors(loop: asyncio.AbstractEventLoop, every_s: float = 60.0
                        ) -> AcceptErrorThrottle:
    handler = AcceptErrorThrottle(every_s)
    loop.set_exception_handler(handler)
    return handler
