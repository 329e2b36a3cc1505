"""Fixtures for browser tests that share one chromium per module (starting
it is most of a test's time): import ``browser``, ``base_url`` and ``page``
into the test module and mark it ``pytest.mark.asyncio(loop_scope="module")``."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest_asyncio
from aiohttp.test_utils import TestServer

from arena.live import LiveHub
from arena.metrics import Metrics
from arena.storage.sqlite import SqliteStore
from arena.web.app import make_app

from tests.browser import WAIT_MS, launch


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def browser() -> AsyncIterator:
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        launched = await launch(p)
        try:
            yield launched
        finally:
            await launched.close()


@pytest_asyncio.fixture(loop_scope="module")
async def base_url(store: SqliteStore, hub: LiveHub) -> AsyncIterator[str]:
    server = TestServer(make_app(store, hub=hub, metrics=Metrics()), host="127.0.0.1")
    await server.start_server()
    try:
        yield str(server.make_url("/")).rstrip("/")
    finally:
        await server.close()


@pytest_asyncio.fixture(loop_scope="module")
async def page(browser) -> AsyncIterator:
    context = await browser.new_context()
    try:
        tab = await context.new_page()
        errors: list[str] = []
        tab.on("pageerror", lambda e: errors.append(str(e)))
        tab.set_default_timeout(WAIT_MS)
        yield tab
        assert errors == [], errors
    finally:
        await context.close()
