"""Server counters and gauges, for ``/metrics`` and the health JSON.

The server updates these on every decision, so updates are plain integer
arithmetic on attributes: no locks, no label dictionaries on the hot path
(except ``error(code)``, which is rare). Everything runs on the event loop
thread.

Decisions per second come from a sliding window of one-second buckets: a
ring of ``window_s`` counters indexed by the current second, so the rate is
a sum over at most ``window_s`` ints. The match session counts a decision
by adding to ``decisions_total`` alone (no call per decision on the hot
path); :meth:`Metrics.sample` puts the decisions counted since its last
call into the current second's bucket. The server samples every second and
every read samples first, so a decision lands in its own second or the
next.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

# Error codes are a closed set in the protocol, but the server could be asked
# to count anything; beyond this many distinct codes the rest are "other" so
# the exposition stays bounded.
MAX_ERROR_CODES = 32
OTHER_CODE = "other"

_HELP: dict[str, tuple[str, str]] = {
    # name: (type, help)
    "tables_running": ("gauge", "Tables with a match in progress."),
    "bots_connected": ("gauge", "Authenticated bot connections."),
    "decisions_total": ("counter", "Decisions answered or defaulted."),
    "timeouts_total": ("counter", "Decisions defaulted at their deadline."),
    "illegal_total": ("counter", "Illegal answers received from bots."),
    "messages_total": ("counter", "Messages decoded from bots' frames and lines."),
    "frames_refused_total": ("counter", "Bot frames or lines refused undecoded (the connection closed)."),
    "matches_finished_total": ("counter", "Matches finished with a result."),
    "matches_aborted_total": ("counter", "Matches aborted without a result."),
}


class Metrics:
    """Counters (only ever increase) and gauges (set by the server)."""

    def __init__(self, *, window_s: int = 60, prefix: str = "arena",
                 clock: Callable[[], float] = time.monotonic) -> None:
        if window_s < 1:
            raise ValueError("window_s must be at least 1 second")
        self.prefix = prefix
        self._clock = clock
        self._started = clock()
        self._window = window_s
        self._bucket_count = [0] * window_s
        self._bucket_second = [-1] * window_s
        # gauges
        self.tables_running = 0
        self.bots_connected = 0
        # counters
        self.decisions_total = 0
        self._bucketed = 0  # of decisions_total, those already in a bucket
        self.timeouts_total = 0
        self.illegal_total = 0
        self.messages_total = 0
        self.frames_refused_total = 0
        self.matches_finished_total = 0
        self.matches_aborted_total = 0
        self.errors_total: dict[str, int] = {}

    # -- updates (hot path) -------------------------------------------------
    def sample(self) -> None:
        """Put the decisions counted since the last sample in this second's bucket."""
        new = self.decisions_total - self._bucketed
        if new <= 0:
            return
        self._bucketed = self.decisions_total
        second = int(self._clock())
        i = second % self._window
        if self._bucket_second[i] != second:
            self._bucket_second[i] = second
            self._bucket_count[i] = 0
        self._bucket_count[i] += new

    async def sample_every_second(self) -> None:
        """The server's sampler: runs until cancelled."""
        while True:
            await asyncio.sleep(1.0)
            self.sample()

    def timeout(self) -> None:
        self.timeouts_total += 1

    def illegal(self) -> None:
        self.illegal_total += 1

    def error(self, code: str) -> None:
        """Count an ``error`` message sent to a bot, by protocol code."""
        if code not in self.errors_total and len(self.errors_total) >= MAX_ERROR_CODES:
            code = OTHER_CODE
        self.errors_total[code] = self.errors_total.get(code, 0) + 1

    def match_finished(self) -> None:
        self.matches_finished_total += 1

    def match_aborted(self) -> None:
        self.matches_aborted_total += 1

    # -- derived --------------------------------------------------------------
    def decisions_per_second(self) -> float:
        """Mean rate over the last ``window_s`` seconds (or since start)."""
        self.sample()
        now = self._clock()
        second = int(now)
        oldest = second - self._window + 1
        total = sum(count for count, sec in zip(self._bucket_count, self._bucket_second)
                    if oldest <= sec <= second)
        span = min(float(self._window), max(now - self._started, 1.0))
        return total / span

    def uptime_s(self) -> float:
        return self._clock() - self._started

    # -- output ---------------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        return {
            "uptime_s": round(self.uptime_s(), 3),
            "tables_running": self.tables_running,
            "bots_connected": self.bots_connected,
            "decisions_total": self.decisions_total,
            "decisions_per_second": round(self.decisions_per_second(), 3),
            "timeouts_total": self.timeouts_total,
            "illegal_total": self.illegal_total,
            "messages_total": self.messages_total,
            "frames_refused_total": self.frames_refused_total,
            "errors_total": dict(sorted(self.errors_total.items())),
            "matches_finished_total": self.matches_finished_total,
            "matches_aborted_total": self.matches_aborted_total,
        }

    def render_prometheus(self, node: str | None = None) -> str:
        """The Prometheus text exposition format (version 0.0.4). ``node``:
        this process's node name, as an info metric (empty for an unnamed node)."""
        p = self.prefix
        lines: list[str] = [f"# HELP {p}_node_info The node that serves these metrics.",
                            f"# TYPE {p}_node_info gauge",
                            f'{p}_node_info{{node="{_label(node or "")}"}} 1']
        for name, (kind, text) in _HELP.items():
            lines += [f"# HELP {p}_{name} {text}", f"# TYPE {p}_{name} {kind}",
                      f"{p}_{name} {getattr(self, name)}"]
        lines += [f"# HELP {p}_errors_total Error messages sent to bots, by protocol code.",
                  f"# TYPE {p}_errors_total counter"]
        for code, count in sorted(self.errors_total.items()):
            lines.append(f'{p}_errors_total{{code="{_label(code)}"}} {count}')
        lines += [f"# HELP {p}_decisions_per_second Decisions per second over the last "
                  f"{self._window} s.",
                  f"# TYPE {p}_decisions_per_second gauge",
                  f"{p}_decisions_per_second {self.decisions_per_second():.3f}",
                  f"# HELP {p}_uptime_seconds Seconds since the metrics were created.",
                  f"# TYPE {p}_uptime_seconds gauge",
                  f"{p}_uptime_seconds {self.uptime_s():.3f}"]
        return "\n".join(lines) + "\n"


def _label(value: str) -> str:
    """Escape a label value as the exposition format requires."""
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')
