"""Limits on what web visitors may use: per-address rate limits and a
bounded pool of threads for store reads.

Addresses are the TCP peer (``request.remote``): behind a reverse proxy every
visitor shares the proxy's address, so put the limits there as well.
"""

from __future__ import annotations

import asyncio
import collections
import math
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")

MAX_KEYS = 100_000  # addresses remembered at once; the idlest are forgotten first


class RateLimiter:
    """A token bucket per key: ``burst`` at once, refilled at ``rate_per_s``."""

    def __init__(self, rate_per_s: float, burst: int, *,
                 clock: Callable[[], float] = time.monotonic, max_keys: int = MAX_KEYS) -> None:
        if rate_per_s <= 0 or burst < 1:
            raise ValueError("rate_per_s must be positive and burst at least 1")
        self.rate = rate_per_s
        self.burst = burst
        self._clock = clock
        self._max_keys = max_keys
        # key -> (tokens, at); least recently touched first
        self._buckets: collections.OrderedDict[str, tuple[float, float]] = \
            collections.OrderedDict()

    def __len__(self) -> int:
        return len(self._buckets)

    def _tokens(self, key: str, now: float) -> float:
        tokens, at = self._buckets.get(key, (float(self.burst), now))
        return min(float(self.burst), tokens + (now - at) * self.rate)

    def retry_after(self, key: str) -> float | None:
        """Seconds until ``key`` may act again, or None if it may now."""
        tokens = self._tokens(key, self._clock())
        return None if tokens >= 1.0 else (1.0 - tokens) / self.rate

    def take(self, key: str) -> float | None:
        """Spend one token: None if there was one, else the seconds to wait."""
        now = self._clock()
        tokens = self._tokens(key, now)
        if tokens < 1.0:
            return (1.0 - tokens) / self.rate
        self._buckets[key] = (tokens - 1.0, now)
        self._buckets.move_to_end(key)
        while len(self._buckets) > self._max_keys:
            self._buckets.popitem(last=False)  # a forgotten address starts full again
        return None


def retry_after_header(seconds: float) -> dict[str, str]:
    return {"Retry-After": str(max(1, math.ceil(seconds)))}


class AddressCounter:
    """How many of something (open streams) each address holds now."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._held: collections.Counter[str] = collections.Counter()

    def acquire(self, key: str) -> bool:
        if self._held[key] >= self.limit:
            return False
        self._held[key] += 1
        return True

    def release(self, key: str) -> None:
        self._held[key] -= 1
        if self._held[key] <= 0:
            del self._held[key]

    def held(self, key: str) -> int:
        return self._held.get(key, 0)


class BusyError(Exception):
    """Too many store reads are waiting; the client should retry shortly."""


class ReadPool:
    """Runs blocking store reads on worker threads, never on the event loop.

    At most ``workers`` run at once and ``queued`` more wait; beyond that a
    call raises :class:`BusyError` at once instead of piling up work.

    A thread still holds the GIL against the loop that times the bots while
    it runs Python, so while ``busy()`` says tables are playing the pool
    also keeps to a CPU budget: its threads together use at most
    ``cpu_share`` of one core (measured per job with ``time.thread_time``,
    up to ``CPU_BURST_S`` ahead); jobs beyond it wait their turn. Jobs run
    with ``charge=False`` (standings, which have their own budget) are not
    counted.
    """

    CPU_BURST_S = 0.25

    def __init__(self, workers: int, queued: int, *, cpu_share: float = 1.0,
                 busy: Callable[[], bool] = lambda: False,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.workers = workers
        self.queued = queued
        self.cpu_share = cpu_share
        self._busy = busy
        self._clock = clock
        self._executor: ThreadPoolExecutor | None = None
        self._waiting = 0
        self._slots: asyncio.Semaphore | None = None
        self._credit = self.CPU_BURST_S  # CPU seconds the pool may still use now
        self._credit_at = clock()
        self.cpu_used_s = 0.0

    def _refill(self) -> float:
        now = self._clock()
        self._credit = min(self.CPU_BURST_S,
                           self._credit + (now - self._credit_at) * self.cpu_share)
        self._credit_at = now
        return self._credit

    async def run(self, fn: Callable[..., T], *args: Any, charge: bool = True,
                  **kwargs: Any) -> T:
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.workers)
        if (self._slots.locked() or self._credit < 0) and self._waiting >= self.queued:
            raise BusyError("the server is busy answering other visitors; retry in a moment")
        self._waiting += 1
        try:
            await self._slots.acquire()
            try:
                while charge and self.cpu_share < 1.0 and self._busy() and self._refill() < 0:
                    await asyncio.sleep(-self._credit / self.cpu_share)
            except BaseException:
                self._slots.release()
                raise
        finally:
            self._waiting -= 1
        slots = self._slots

        def timed() -> tuple[T, float]:
            cpu0 = time.thread_time()
            value = fn(*args, **kwargs)
            return value, time.thread_time() - cpu0

        future = asyncio.get_running_loop().run_in_executor(self._pool(), timed)

        def done(f: asyncio.Future[tuple[T, float]]) -> None:
            # The slot is held until the thread is done, even if the request
            # that asked is cancelled (its visitor left): the bound counts threads.
            slots.release()
            if f.cancelled():
                return
            if f.exception() is None and charge:
                used = f.result()[1]
                self.cpu_used_s += used
                self._refill()
                self._credit -= used

        future.add_done_callback(done)
        value, _ = await asyncio.shield(future)
        return value

    def _pool(self) -> ThreadPoolExecutor:
        if self._executor is None:
            self._executor = ThreadPoolExecutor(self.workers, thread_name_prefix="web-read")
        return self._executor

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None
