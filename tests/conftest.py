"""Suite-wide: tests that patch a compiled module run on the sources only.

A test marked ``source_only`` replaces a function or class member of a
per-decision module (to count calls, or to subclass a session). Compiled
code calls those directly, so the patch would not be seen: on a compiled
install such a test is skipped here, and runs in the same pytest run on
the sources (``test_the_sources_pass`` in ``tests/test_compiled.py``).
"""

from __future__ import annotations

import pytest

import arena.pure


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
