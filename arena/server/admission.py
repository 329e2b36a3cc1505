"""Who may hold a connection to the bot port, and how many (pure logic).

No sockets here: the server asks before it lets a connection in (at
connect, by address; at hello, by token) and tells when one is gone. Each
``Refusal`` carries the error a bot author reads before the close.

* ``ConnectionCaps``: connections in all, per remote address, per token.
  The arena's own local bots (``arena match``, tournaments) all connect
  from 127.0.0.1: once their hello shows a local token they stop counting
  against their address, so a tournament of many local bots is never
  refused by the per-address cap.
* ``FailureWindow``: failed hellos per address in a sliding window; over
  the limit, further hellos from that address are refused without a store
  lookup until the oldest failure leaves the window, so guessing tokens is
  as slow as the limit says.
"""

from __future__ import annotations

import collections
import math
import time
from dataclasses import dataclass
from typing import Callable

from protocol.errors import ErrorCode


@dataclass(frozen=True)
class Refusal:
    """Why a connection may not be (or stay) open; sent as an ``error``."""

    code: ErrorCode
    message: str
    retry_after_s: int | None = None


class ConnectionCaps:
    def __init__(self, *, total: int, per_address: int, per_token: int) -> None:
        self.total = total
        self.per_address = per_address
        self.per_token = per_token
        self._open = 0
        self._by_address: collections.Counter[str] = collections.Counter()
        self._by_token: collections.Counter[str] = collections.Counter()

    @property
    def open(self) -> int:
        return self._open

    def admit(self, address: str) -> Refusal | None:
        """A new connection from ``address``: counted if admitted."""
        if self._open >= self.total:
            return Refusal(ErrorCode.RATE_LIMITED,
                           f"the server holds its limit of {self.total} connections; try "
                           "again later; connection closed", retry_after_s=5)
        if self._by_address[address] >= self.per_address:
            return Refusal(ErrorCode.RATE_LIMITED,
                           f"{address} already holds {self.per_address} connections, the limit "
                           "per address; connection closed")
        self._open += 1
        self._by_address[address] += 1
        return None

    def exempt(self, address: str) -> None:
        """An admitted connection turned out to be the arena's own bot."""
        self._drop(self._by_address, address)

    def claim_token(self, token_hash: str) -> Refusal | None:
        """An admitted connection said hello with this token."""
        if self._by_token[token_hash] >= self.per_token:
            return Refusal(ErrorCode.RATE_LIMITED,
                           f"this token already holds {self.per_token} connections, the limit "
                           "per token; connection closed")
        self._by_token[token_hash] += 1
        return None

    def release(self, address: str | None, token_hash: str | None) -> None:
        """An admitted connection is gone (``None``: not counted there)."""
        self._open -= 1
        if address is not None:
            self._drop(self._by_address, address)
        if token_hash is not None:
            self._drop(self._by_token, token_hash)

    @staticmethod
    def _drop(counter: collections.Counter[str], key: str) -> None:
        counter[key] -= 1
        if counter[key] <= 0:
            del counter[key]


class FailureWindow:
    """At most ``limit`` failures per address in any ``window_s`` seconds."""

    def __init__(self, *, limit: int, window_s: float = 60.0,
                 clock: Callable[[], float] = time.monotonic, max_addresses: int = 100_000) -> None:
        self.limit = limit
        self.window_s = window_s
        self._clock = clock
        self._max_addresses = max_addresses
        self._failures: dict[str, collections.deque[float]] = {}

    def check(self, address: str) -> Refusal | None:
        """Refuse a hello from ``address`` while it is over the limit."""
        failures = self._failures.get(address)
        if failures is None:
            return None
        self._expire(address, failures)
        if len(failures) < self.limit:
            return None
        wait = max(1, math.ceil(failures[0] + self.window_s - self._clock()))
        return Refusal(ErrorCode.RATE_LIMITED,
                       f"{self.limit} failed hellos from {address} within {self.window_s:g} s; "
                       f"try again in {wait} s; connection closed", retry_after_s=wait)

    def failed(self, address: str) -> None:
        failures = self._failures.get(address)
        if failures is None:
            if len(self._failures) >= self._max_addresses:
                self._forget_expired()
            failures = self._failures[address] = collections.deque()
        failures.append(self._clock())
        while len(failures) > self.limit:  # only the newest `limit` ever matter
            failures.popleft()

    def _expire(self, address: str, failures: collections.deque[float]) -> None:
        horizon = self._clock() - self.window_s
        while failures and failures[0] <= horizon:
            failures.popleft()
        if not failures:
            del self._failures[address]

    def _forget_expired(self) -> None:
        """Bound the memory a crowd of addresses can cost."""
        for address, failures in list(self._failures.items()):
            self._expire(address, failures)
        while len(self._failures) >= self._max_addresses:
            self._failures.pop(next(iter(self._failures)))
