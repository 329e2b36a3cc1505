"""Web visitors cannot stall the games.

Before: standings and bot pages were computed on the event loop that times
the bots, every finished match threw the computed table away, and any
number of expensive requests ran at once. With ~5,000 finished matches one
request held the loop 4.6 s.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer

from arena.metrics import Metrics
from arena.storage.sqlite import SqliteStore
from arena.web.app import make_app
from arena.web.keys import WebLimits
from arena.live import LiveHub

from .helpers import PLAYERS, finish_in_store, make_match
from tests.timing import MS

READS = ("get_bot", "find_bot_by_token_hash", "list_bots", "get_match", "get_events",
         "list_matches", "count_matches", "finished_matches", "get_tournament",
         "list_tournaments", "get_schedule")


class WatchedStore(SqliteStore):
    """Records the thread of every read; ``delay_s`` makes reads slow."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.threads: list[int] = []
        self.delay_s = 0.0
        self.calls: dict[str, int] = {}
        self.running = 0
        self.max_running = 0
        self._count_lock = threading.Lock()


def _watched(name: str):
    base = getattr(SqliteStore, name)

    def read(self, *args, **kwargs):
        self.threads.append(threading.get_ident())
        with self._count_lock:
            self.calls[name] = self.calls.get(name, 0) + 1
            self.running += 1
            self.max_running = max(self.max_running, self.running)
        try:
            if self.delay_s:
                time.sleep(self.delay_s)
            return base(self, *args, **kwargs)
        finally:
            with self._count_lock:
                self.running -= 1
    return read


for _name in READS:
    setattr(WatchedStore, _name, _watched(_name))


@pytest.fixture
def watched(tmp_path: Path) -> WatchedStore:
    s = WatchedStore(tmp_path / "watched.db")
    yield s
    s.close()


async def client_for(store: SqliteStore, limits: WebLimits | None = None) -> TestClient:
    app = make_app(store, hub=LiveHub(), metrics=Metrics(), limits=limits)
    c = TestClient(TestServer(app))
    await c.start_server()
    return c


@pytest.fixture
async def clients() -> AsyncIterator[list[TestClient]]:
    made: list[TestClient] = []
    yield made
    for c in made:
        await c.close()


API_READS = ["/api/standings", "/api/standings?scope=all", "/api/bots", "/api/bots/alpha",
             "/api/matches", "/api/matches?bot=alpha", "/api/matches/m0",
             "/api/matches/m0/events", "/api/tournaments", "/api/health"]
PAGES = ["/", "/bots/alpha", "/partials/standings?scope=ladder"]


async def test_api_store_reads_never_run_on_the_loop_thread(watched: WatchedStore,
                                                            clients) -> None:
    finish_in_store(watched, make_match("m0"))
    c = await client_for(watched)
    clients.append(c)
    watched.threads.clear()
    for path in API_READS:
        assert (await c.get(path)).status == 200, path
    assert watched.threads
    assert threading.get_ident() not in watched.threads


@pytest.mark.parametrize("path", ["/api/standings", "/api/bots/alpha", *PAGES])
async def test_the_loop_keeps_ticking_while_standings_are_read(watched: WatchedStore,
                                                               clients, path: str) -> None:
    for i in range(3):
        finish_in_store(watched, make_match(f"m{i}", seed=i))
    c = await client_for(watched)
    clients.append(c)
    watched.delay_s = 0.3  # a big store: every read takes a while
    watched.threads.clear()
    response = await c.get(path)
    assert response.status == 200, await response.text()
    # Every slow read ran on a thread, none on the loop's: the loop ticks on.
    # (Said by thread, not by the loop's gaps, which a loaded machine
    # stretches whatever the page does.)
    assert watched.threads
    assert threading.get_ident() not in watched.threads


async def test_finished_matches_do_not_recompute_standings_at_every_request(
        watched: WatchedStore, clients) -> None:
    finish_in_store(watched, make_match("a"))
    # Long enough that the five requests below come within it on a loaded machine.
    refresh_s = 3000 * MS
    c = await client_for(watched, WebLimits(standings_refresh_s=refresh_s))
    clients.append(c)
    first = await (await c.get("/api/standings")).json()
    assert first["standings"][0]["matches"] == 1
    computed = watched.calls["finished_matches"]
    for i in range(5):
        finish_in_store(watched, make_match(f"b{i}", seed=10 + i))
        body = await (await c.get("/api/standings")).json()
        assert body["standings"][0]["matches"] == 1  # the table of a moment ago
    assert watched.calls["finished_matches"] <= computed + 1
    await asyncio.sleep(refresh_s + 0.1)
    async with asyncio.timeout(5000 * MS):
        while True:
            body = await (await c.get("/api/standings")).json()
            if body["standings"][0]["matches"] == 6:
                break
            await asyncio.sleep(0.05)
    assert watched.calls["finished_matches"] <= computed + 2


async def test_standings_are_fresh_when_recomputing_is_cheap(watched: WatchedStore,
                                                             clients) -> None:
    c = await client_for(watched)
    clients.append(c)
    for i in range(3):
        finish_in_store(watched, make_match(f"m{i}", seed=i))
        body = await (await c.get("/api/standings")).json()
        assert {row["matches"] for row in body["standings"]} == {i + 1}


async def test_concurrent_expensive_requests_are_bounded(watched: WatchedStore,
                                                         clients) -> None:
    finish_in_store(watched, make_match("m0"))
    c = await client_for(watched, WebLimits(concurrent_reads=2, queued_reads=2))
    clients.append(c)
    watched.delay_s = 0.2
    watched.max_running = 0
    responses = await asyncio.gather(*[c.get(f"/api/matches?offset={i}") for i in range(12)])
    statuses = sorted(r.status for r in responses)
    assert statuses.count(200) >= 2 and statuses.count(503) >= 1, statuses
    busy = next(r for r in responses if r.status == 503)
    assert int(busy.headers["Retry-After"]) >= 1
    assert (await busy.json())["error"]["status"] == 503
    assert watched.max_running <= 2


async def test_bot_stats_match_the_standings_row(watched: WatchedStore, clients) -> None:
    for i in range(4):
        finish_in_store(watched, make_match(f"m{i}", seed=i), finished_at=1000.0 + i)
    c = await client_for(watched)
    clients.append(c)
    rows = (await (await c.get("/api/standings")).json())["standings"]
    for name in PLAYERS:
        stats = await (await c.get(f"/api/bots/{name}")).json()
        assert stats["standing"] == next(r for r in rows if r["bot"] == name)
        assert stats["matches"] == 4 and len(stats["rating_history"]) == 4
        assert stats["latency"]["decisions"] == 12


def test_a_table_updated_with_new_matches_equals_one_computed_afresh(
        watched: WatchedStore) -> None:
    from arena.tournament.standings import compute_standings, rating_history
    from arena.web.scopes import compute_table

    for i in range(3):
        finish_in_store(watched, make_match(f"m{i}", seed=i), finished_at=1000.0 + i)
    first = compute_table(watched, "ladder", time.monotonic, 1)
    for i in range(3, 6):
        players = ["alpha", "beta", "gamma", "delta", f"new{i}"]
        finish_in_store(watched, make_match(f"m{i}", seed=i, players=players),
                        finished_at=1000.0 + i)
    full_reads = watched.calls["finished_matches"]
    updated = compute_table(watched, "ladder", time.monotonic, 2, first)
    assert watched.calls["finished_matches"] == full_reads  # only the new matches were read
    fresh = compute_table(watched, "ladder", time.monotonic, 3)
    updated, fresh = updated.game("muushig"), fresh.game("muushig")
    assert updated.rows == fresh.rows == [r.to_dict() for r in compute_standings(fresh.matches)]
    assert updated.histories == fresh.histories
    for bot, history in fresh.histories.items():
        assert [(h["match"], h["finished_at"], h["mu"], h["sigma"]) for h in history] == \
            rating_history(fresh.matches, bot)


async def test_while_tables_play_reads_keep_to_a_cpu_share() -> None:
    from arena.web.limits import ReadPool

    playing = True
    stopped: float | None = None  # the pool's clock stops here: credit never refills
    pool = ReadPool(2, 100, cpu_share=0.1, busy=lambda: playing,
                    clock=lambda: time.monotonic() if stopped is None else stopped)

    def burn() -> None:
        t0 = time.thread_time()
        while time.thread_time() - t0 < 0.02:
            pass

    try:
        t0 = time.monotonic()
        await asyncio.gather(*[pool.run(burn) for _ in range(20)])  # 0.4 s of CPU
        elapsed = time.monotonic() - t0
        # 0.25 s of credit at once, the rest at 0.1 s per second
        assert elapsed >= 1.0, elapsed
        assert pool.cpu_used_s >= 0.4
        # Nobody plays: no budget. The credit is spent and its clock stopped,
        # so a run that waited for credit would wait forever.
        playing = False
        stopped = time.monotonic()
        async with asyncio.timeout(30_000 * MS):
            await asyncio.gather(*[pool.run(burn) for _ in range(10)])
    finally:
        pool.close()
