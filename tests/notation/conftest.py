"""Notation and dataset tests store matches on SQLite and on PostgreSQL
(the throwaway cluster of the store tests, tests/storage/pg_cluster.py)."""

from collections.abc import Iterator

import pytest

from arena.storage import open_store
from arena.storage.base import Store


@pytest.fixture(params=["sqlite", "postgresql"])
def any_store(request: pytest.FixtureRequest, tmp_path) -> Iterator[Store]:
    location = (str(request.getfixturevalue("pg_url")) if request.param == "postgresql"
                else str(tmp_path / "arena.db"))
    store = open_store(location)
    yield store
    store.close()
