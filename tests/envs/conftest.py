# The arena servers of the server tests (free ports, stopped after).
from tests.server.conftest import make_server  # noqa: F401
