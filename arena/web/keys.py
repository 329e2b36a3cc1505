"""Typed application state (``web.AppKey``) and the web's settings."""

from __future__ import annotations

import asyncio
import enum
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from arena.metrics import Metrics
from arena.storage.base import Store
from arena.storage.writer import StoreWriter
from arena.web.errors import StoreHealth
from arena.web.limits import AddressCounter, RateLimiter
from arena.live import LiveHub
from arena.web.queries import Queries

ADMIN_TOKEN_ENV = "ARENA_ADMIN_TOKEN"


class RegistrationMode(str, enum.Enum):
    """Who may register a bot over HTTP (``POST /api/bots``).

    ``admin`` is the default: nobody can fill the server with bots
    anonymously; the operator registers bots with ``arena bots add`` or the
    admin token. ``open`` is an explicit choice for public ladders (rate
    limited per address); ``closed`` refuses HTTP registration altogether.
    """

    OPEN = "open"
    ADMIN = "admin"
    CLOSED = "closed"

    @classmethod
    def parse(cls, value: RegistrationMode | str) -> RegistrationMode:
        try:
            return cls(value)
        except ValueError:
            choices = ", ".join(m.value for m in cls)
            raise ValueError(f"registration mode must be one of {choices}; got {value!r}") \
                from None


@dataclass(frozen=True)
class WebLimits:
    """What one visitor (one address) and all visitors together may use."""

    registrations_per_hour: float = 10.0  # per address, open mode
    registration_burst: int = 5
    auth_failures_per_minute: float = 10.0  # wrong bot or admin tokens, per address
    auth_failure_burst: int = 10
    streams_per_address: int = 20  # live (SSE) streams at once
    concurrent_reads: int = 4  # store reads running at once (worker threads)
    queued_reads: int = 64  # reads waiting for a worker; beyond: 503
    # While tables play, the read threads together use at most this share of
    # one core (they hold the GIL against the loop that times the bots);
    # standings keep to their own share (arena.web.scopes.COST_FACTOR).
    cpu_share_while_playing: float = 0.05
    # Standings of a scope are recomputed at most this often, and never more
    # often than STANDINGS_COST_FACTOR times the last computation took.
    standings_refresh_s: float = 0.0

    def __post_init__(self) -> None:
        if self.concurrent_reads < 1 or self.queued_reads < 0 or self.streams_per_address < 1:
            raise ValueError("concurrent_reads and streams_per_address must be at least 1, "
                             "queued_reads at least 0")
        if not 0 < self.cpu_share_while_playing <= 1:
            raise ValueError("cpu_share_while_playing must be in (0, 1]")


@dataclass(frozen=True)
class Settings:
    admin_token: str | None
    registration: RegistrationMode = RegistrationMode.ADMIN
    limits: WebLimits = field(default_factory=WebLimits)
    server_info: dict[str, Any] = field(default_factory=dict)


def admin_token_from(flag: str | None, token_file: str | None,
                     environ: Mapping[str, str] = os.environ) -> str | None:
    """The admin token: ``--admin-token-file``, else ``--admin-token``
    (visible to every user of the machine in ``ps``: prefer the others),
    else the ``ARENA_ADMIN_TOKEN`` variable, else None (admin disabled)."""
    if token_file is not None:
        try:
            with open(token_file, encoding="utf-8") as f:
                token = f.read().strip()
        except OSError as exc:
            raise ValueError(f"cannot read the admin token file {token_file!r}: "
                             f"{exc.strerror or exc}") from None
        if not token:
            raise ValueError(f"the admin token file {token_file!r} is empty")
        return token
    if flag:
        return flag
    return environ.get(ADMIN_TOKEN_ENV, "").strip() or None


STORE = web.AppKey("store", Store)
HUB = web.AppKey("hub", LiveHub)
METRICS = web.AppKey("metrics", Metrics)
QUERIES = web.AppKey("queries", Queries)
SETTINGS = web.AppKey("settings", Settings)
WRITER = web.AppKey("writer", StoreWriter)  # absent: the web writes on its own threads
HEALTH = web.AppKey("health", StoreHealth)
REGISTRATIONS = web.AppKey("registrations", RateLimiter)  # per address
AUTH_FAILURES = web.AppKey("auth_failures", RateLimiter)  # per address
STREAMS = web.AppKey("streams", AddressCounter)  # open live streams per address
# Set at shutdown so open live streams end instead of holding the server up.
STOPPING = web.AppKey("stopping", asyncio.Event)
# Close a bot's open connections: (bot, reason, token hash to keep or None),
# the count closed. The arena's own server, and every worker's if it has
# workers (arena.server.revoke); absent: the web runs without bot servers.
Disconnect = Callable[[str, str, "str | None"], int]
DISCONNECTS = web.AppKey("disconnects", list)
