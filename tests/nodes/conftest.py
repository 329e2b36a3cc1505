"""Node tests run real ``arena`` processes on the throwaway PostgreSQL
cluster of the store tests (tests/storage/pg_cluster.py)."""

from storage.conftest import pg_cluster, pg_url  # noqa: F401 - the shared fixtures
