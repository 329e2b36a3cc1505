"""The store fixtures (a throwaway PostgreSQL cluster per test run)."""

from storage.conftest import pg_cluster, pg_url  # noqa: F401 - the shared fixtures
