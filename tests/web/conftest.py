from __future__ import annotations

import importlib
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

try:
    importlib.import_module("arena.tournament.standings")
except ModuleNotFoundError:  # not written yet: use the stand-in with its contract
    from . import standings_stub

    sys.modules["arena.tournament.standings"] = standings_stub

from aiohttp.test_utils import TestClient, TestServer  # noqa: E402

from arena.metrics import Metrics  # noqa: E402
from arena.storage.sqlite import SqliteStore  # noqa: E402
from arena.web.app import make_app  # noqa: E402
from arena.web.live import LiveHub  # noqa: E402

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
