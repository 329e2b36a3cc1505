"""A page given an older standings table (the cache was cooling down, or a
computation from older data was still running) is told to fetch again once
the fresh table is kept: without that nudge it showed the old table until
the next match ended."""

from __future__ import annotations

import asyncio

from arena.storage.sqlite import SqliteStore
from arena.web.scopes import ScopeCache

from .helpers import finish_in_store, make_match


async def _run(fn, *args, charge: bool = True):  # noqa: ARG001 - the ReadPool's signature
    return await asyncio.to_thread(fn, *args)


async def test_a_page_served_an_older_table_is_told_when_the_fresh_one_is_ready(tmp_path):
    store = SqliteStore(tmp_path / "arena.db")
    try:
        told: list[str] = []
        cache = ScopeCache(store, _run, refresh_s=1.0)  # cools down longer than a request waits
        cache.on_refreshed = told.append
        finish_in_store(store, make_match("m1"))
        first = await cache.get("ladder")
        assert not any(row["bot"] == "zeta" for row in first.game("muushig").rows)
        finish_in_store(store, make_match("m2", players=["beta", "zeta", "gamma", "delta", "eps"]))
        served = await cache.get("ladder")
        assert served is first  # cooling down: the older table, at once
        async with asyncio.timeout(30):
            while not told:
                await asyncio.sleep(0.02)
        assert told == ["ladder"]
        fresh = await cache.get("ladder")
        assert fresh is not first and fresh.key != first.key
        assert any(row["bot"] == "zeta" for row in fresh.game("muushig").rows)
        cache.close()
    finally:
        store.close()
