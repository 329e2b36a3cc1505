"""The web application: JSON API, live streams, pages, static files.

Built by :func:`make_app` so the server and the tests share one recipe. The
server owns the store, the hub and the metrics; this app only reads them,
except for the HTTP writes in :mod:`arena.web.accounts` (bots, tokens,
pending tournaments).
"""

from __future__ import annotations

import asyncio
from importlib import resources
from pathlib import Path
from typing import Any

from aiohttp import web

from arena.metrics import Metrics
from arena.storage.base import Store
from arena.web import accounts, api, pages, sse
from arena.web.errors import error_middleware
from arena.web.keys import HUB, METRICS, QUERIES, SETTINGS, STOPPING, STORE, Settings
from arena.web.live import LiveHub
from arena.web.queries import Queries

MAX_BODY = 64 * 1024  # registration and tournament configs are small


async def _security_headers(request: web.Request, response: web.StreamResponse) -> None:
    # Everything is served from this origin; no inline scripts anywhere.
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    if response.content_type == "text/html":
        response.headers.setdefault(
            "Content-Security-Policy",
            "default-src 'self'; img-src 'self' data:; style-src 'self'; "
            "script-src 'self'; connect-src 'self'; base-uri 'none'; frame-ancestors 'none'")


async def _stop_streams(app: web.Application) -> None:
    app[STOPPING].set()


def make_app(store: Store, *, hub: LiveHub, metrics: Metrics,
             admin_token: str | None = None, registration_open: bool = True,
             server_info: dict[str, Any] | None = None,
             hosting: Any = None) -> web.Application:
    app = web.Application(middlewares=[error_middleware], client_max_size=MAX_BODY)
    app[STORE] = store
    app[HUB] = hub
    app[METRICS] = metrics
    app[QUERIES] = Queries(store, hub)
    app[SETTINGS] = Settings(admin_token=admin_token, registration_open=registration_open,
                             server_info=dict(server_info or {}))
    app[STOPPING] = asyncio.Event()
    app.on_shutdown.append(_stop_streams)
    app.on_response_prepare.append(_security_headers)
    # Order matters: fixed paths (/api/matches/live) before {id} patterns.
    app.router.add_routes(sse.routes)
    app.router.add_routes(accounts.routes)
    if hosting is not None:  # hosted bots: uploads, builds, logs
        from arena.web import hosting_api

        hosting_api.setup(app, hosting)
    app.router.add_routes(api.routes)
    app.router.add_routes(pages.routes)
    static = Path(str(resources.files("arena.web").joinpath("static")))
    app.router.add_static("/static", static, name="static", append_version=False)
    return app
