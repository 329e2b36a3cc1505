from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from aiohttp.test_utils import TestClient, TestServer

from arena.metrics import Metrics
from arena.storage.sqlite import SqliteStore
from arena.web.app import make_app
from arena.live import LiveHub

ADMIN = "admin-secret-token"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    s = SqliteStore(tmp_path / "arena.db")
    yield s
    s.close()


@pytest.fixture
def hub() -> LiveHub:
    return LiveHub()


@pytest.fixture
def metrics() -> Metrics:
    return Metrics()


@pytest.fixture
async def client(store: SqliteStore, hub: LiveHub, metrics: Metrics
                 ) -> AsyncIterator[TestClient]:
    app = make_app(store, hub=hub, metrics=metrics, admin_token=ADMIN,
                   server_info={"software": "muushig-arena/test"})
    async with TestClient(TestServer(app)) as c:
        yield c
