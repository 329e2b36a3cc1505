"""Trying again after a failure without hammering the cause or the log.

Both parts are pure: the caller passes the time (``time.monotonic()`` in the
server, any number in tests), so the rules are stepped without waiting.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Backoff:
    """Delays between attempts that double after each failure, up to ``max_s``.

    A full disk fails every table the lobby builds; trying again at once
    would only spin. A success resets the delay, so the first failure after a
    good spell is retried quickly.
    """

    first_s: float = 0.25
    max_s: float = 10.0
    failures: int = 0  # in a row, since the last success
    until: float = 0.0  # no attempt before this time

    def ready(self, now: float) -> bool:
        return now >= self.until

    def remaining(self, now: float) -> float:
        return max(0.0, self.until - now)

    def failed(self, now: float) -> float:
        """Note a failure at ``now``; the delay before the next attempt."""
        delay = min(self.max_s, self.first_s * (2 ** self.failures))
        self.failures += 1
        self.until = now + delay
        return delay

    def succeeded(self) -> int:
        """Note a success; how many failures in a row it ends."""
        ended, self.failures, self.until = self.failures, 0, 0.0
        return ended


@dataclass
class LogThrottle:
    """At most one log line per ``every_s`` for one recurring condition.

    ``allow(now)`` is None while a line would repeat too soon, else the
    number of lines held back since the last one (said in that line, so the
    log still tells how often it happened).
    """

    every_s: float = 60.0
    last: float | None = None
    held_back: int = 0

    def allow(self, now: float) -> int | None:
        if self.last is not None and now - self.last < self.every_s:
            self.held_back += 1
            return None
        held, self.held_back, self.last = self.held_back, 0, now
        return held

    def reset(self) -> None:
        """The condition ended: its next occurrence is logged at once."""
        self.last, self.held_back = None, 0
