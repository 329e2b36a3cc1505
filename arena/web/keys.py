"""Typed application state (``web.AppKey``) shared by the web modules."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from arena.metrics import Metrics
from arena.storage.base import Store
from arena.web.live import LiveHub
from arena.web.queries import Queries


@dataclass(frozen=True)
class Settings:
    admin_token: str | None
    registration_open: bool
    server_info: dict[str, Any] = field(default_factory=dict)


STORE = web.AppKey("store", Store)
HUB = web.AppKey("hub", LiveHub)
METRICS = web.AppKey("metrics", Metrics)
QUERIES = web.AppKey("queries", Queries)
SETTINGS = web.AppKey("settings", Settings)
# Set at shutdown so open live streams end instead of holding the server up.
STOPPING = web.AppKey("stopping", asyncio.Event)
