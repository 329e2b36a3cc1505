"""A house entrant's figures are the same on its page, in the ladder and in
the API: one count, once per seat it held (the standings' rule)."""

from __future__ import annotations

from aiohttp.test_utils import TestClient

from arena.storage.sqlite import SqliteStore

from .helpers import make_match
from .test_pages_bots import LOBBY, play_unregistered


async def test_a_house_entrant_has_one_count_everywhere(client: TestClient,
                                                        store: SqliteStore) -> None:
    for i in range(3):
        play_unregistered(store, make_match(f"lobby{i}", players=LOBBY, seed=i),
                          finished_at=1000.0 + i)
    ladder = (await (await client.get("/api/standings")).json())["standings"]
    row = next(r for r in ladder if r["bot"] == "house-heuristic")
    assert row["matches"] == 3 * 3  # three seats in each of three matches
    stats = await (await client.get("/api/bots/house-heuristic")).json()
    standing = stats.get("standing") or {}
    assert stats["matches"] == row["matches"] == standing.get("matches", row["matches"])
    assert stats["stars_per_match"] == round(row["stars_per_match"], 4)
    page = await (await client.get("/bots/house-heuristic")).text()
    assert f"<dd>{row['matches']}" in page
    assert "(seats, in 3 matches)" in page
