"""Store fixtures: every store test runs on SQLite and on PostgreSQL.

PostgreSQL tests need a throwaway cluster (:mod:`tests.storage.pg_cluster`),
started once per test process on first use and stopped at its end (its
fixtures, ``pg_cluster`` and ``pg_url``, are in tests/conftest.py). Where the
server binaries cannot be had the PostgreSQL cases are skipped with the
reason, unless ``ARENA_REQUIRE_POSTGRES=1`` (as in CI) makes that a failure.
"""

from __future__ import annotations

from typing import Callable, Iterator

import pytest

from arena.storage import open_store
from arena.storage.base import Store


BACKENDS = ["sqlite", "postgresql"]


@pytest.fixture(params=BACKENDS)
def db_location(request: pytest.FixtureRequest, tmp_path) -> str:
    """Where a fresh store lives: a SQLite file or a PostgreSQL database."""
    if request.param == "postgresql":
        return str(request.getfixturevalue("pg_url"))
    return str(tmp_path / "arena.db")


@pytest.fixture
def open_at(db_location: str) -> Iterator[Callable[[], Store]]:
    """Opens (and at the end closes) stores on ``db_location``."""
    opened: list[Store] = []

    def open_one() -> Store:
        opened.append(open_store(db_location))
        return opened[-1]

    yield open_one
    for store in opened:
        store.close()


@pytest.fixture(params=["sqlite-file", "sqlite-memory", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path) -> Iterator[Store]:
    if request.param == "postgresql":
        location = str(request.getfixturevalue("pg_url"))
    elif request.param == "sqlite-memory":
        location = ":memory:"
    else:
        location = str(tmp_path / "arena.db")
    s = open_store(location)
    yield s
    s.close()
