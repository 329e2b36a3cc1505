"""The web's handle on hosted bots (an app key of its own, so the account
routes can stop a removed bot's code without importing the upload routes)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from arena.hosting.archive import ArchiveLimits
from arena.hosting.queue import BuildQueue, UploadLimits
from arena.hosting.versions import VersionStore
from arena.web.limits import RateLimiter


@dataclass
class Hosting:
    """What the web needs of hosted bots: their versions, the limits on
    uploads and the queue their builds wait in."""

    versions: VersionStore
    limits: ArchiveLimits = field(default_factory=ArchiveLimits)
    uploads: UploadLimits = field(default_factory=UploadLimits)
    queue: BuildQueue = field(init=False)
    rate: RateLimiter = field(init=False)  # uploads per bot
    reading: int = 0  # upload bodies being read now

    def __post_init__(self) -> None:
        self.queue = BuildQueue(self.uploads.builds_at_once, self.uploads.builds_waiting)
        self.rate = RateLimiter(self.uploads.uploads_per_hour / 3600.0, self.uploads.upload_burst)

    @property
    def builds(self) -> set[asyncio.Task[Any]]:
        return self.queue.tasks


HOSTING = web.AppKey("hosting", Hosting)
