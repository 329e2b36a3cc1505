"""Suite-wide: tests that patch a compiled module run on the sources only.

A test marked ``source_only`` replaces a function or class member of a
per-decision module (to count calls, or to subclass a session). Compiled
code calls those directly, so the patch would not be seen: on a compiled
install such a test is skipped here, and runs in the same pytest run on
the sources (``test_the_sources_pass`` in ``tests/test_compiled.py``).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Iterator

import pytest

import arena.pure
from storage.pg_cluster import ClusterUnavailable, PgCluster


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "source_only: patches a compiled module; "
                                       "runs where the sources are imported")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    import arena.server.session  # noqa: F401 - one hot module loaded decides for all
    if not arena.pure.compiled_modules():
        return
    skip = pytest.mark.skip(reason="patches a compiled module; runs on the sources in "
                                   "test_compiled.py::test_the_sources_pass")
    for item in items:
        if item.get_closest_marker("source_only") is not None:
            item.add_marker(skip)


# The throwaway PostgreSQL cluster (tests/storage/pg_cluster.py): defined
# here once, so every test module of a test process shares one cluster. (A
# module or folder importing these fixtures would register its own copy,
# and each copy starts its own cluster.) Where the server binaries cannot
# be had the PostgreSQL cases are skipped with the reason, unless
# ``ARENA_REQUIRE_POSTGRES=1`` (as in CI) makes that a failure.
@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PgCluster]:
    try:
        cluster = PgCluster.start()
    except ClusterUnavailable as exc:
        if os.environ.get("ARENA_REQUIRE_POSTGRES") == "1":
            pytest.fail(f"PostgreSQL is required here but unavailable: {exc}")
        pytest.skip(f"PostgreSQL unavailable: {exc}")
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def pg_url(pg_cluster: PgCluster) -> Iterator[str]:
    """A new, empty database."""
    url = pg_cluster.create_database()
    yield url
    pg_cluster.drop_database(url)


@pytest.fixture
def temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The folder Python's ``tempfile`` makes folders in, for this test
    alone: whatever the arena leaves behind there is left to see."""
    folder = tmp_path / "temp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder
