"""Node tests run real ``arena`` processes on the throwaway PostgreSQL
cluster of the store tests (tests/storage/pg_cluster.py); ``db_location``
runs a test on SQLite and on PostgreSQL. In-process nodes and remote bots:
tests/nodes/arenas.py; node processes: tests/nodes/nodes.py."""

from storage.conftest import db_location  # noqa: F401 - the shared fixtures
