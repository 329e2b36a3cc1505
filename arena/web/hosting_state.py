"""The web's handle on hosted bots (an app key of its own, so the account
routes can stop a removed bot's code without importing the upload routes)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from arena.hosting.archive import ArchiveLimits
from arena.hosting.versions import VersionStore


@dataclass
class Hosting:
    """What the web needs of hosted bots: their versions and a place for builds."""

    versions: VersionStore
    limits: ArchiveLimits = field(default_factory=ArchiveLimits)
    builds: set[asyncio.Task[Any]] = field(default_factory=set)


HOSTING = web.AppKey("hosting", Hosting)
