"""Fixtures of the worker tests: ``arena serve --workers N`` processes that
are always stopped."""

from __future__ import annotations

import pytest

from .served import Served


@pytest.fixture
def served(tmp_path):
    started: list[Served] = []

    def start(*args: str, workers: int = 2, db: str | None = None,
              node: str | None = None) -> Served:
        started.append(Served(db or tmp_path / "arena.db", *args, workers=workers, node=node,
                              log_path=tmp_path / f"serve-{len(started)}.log"))
        return started[-1]
    yield start
    for one in started:
        if one.proc.poll() is None:
            one.kill()
