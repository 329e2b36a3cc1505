"""A Swiss tournament on the web: its progress counts every round (only the
paired ones are stored), the page names the round, the API each slot's round."""

from __future__ import annotations

from aiohttp.test_utils import TestClient

from arena.storage.sqlite import SqliteStore
from arena.tournament.config import parse_config
from arena.tournament.runner import create_or_load


def swiss_tournament(store: SqliteStore, tmp_path) -> str:
    config = parse_config({
        "name": "big", "schedule": {"kind": "swiss", "rounds": 4},
        "entrant": [{"name": f"b{i}", "remote": True} for i in range(10)]}, base_dir=tmp_path)
    record, _ = create_or_load(store, config)
    return record.id


async def test_the_api_counts_all_rounds_and_names_each_slots_round(
        client: TestClient, store: SqliteStore, tmp_path) -> None:
    tid = swiss_tournament(store, tmp_path)
    one = (await (await client.get(f"/api/tournaments/{tid}")).json())["tournament"]
    # Ten entrants at five seats: two tables of five rotations a round.
    assert one["progress"] == {"done": 0, "total": 4 * 10, "round": 1, "rounds": 4}
    assert one["config"]["schedule"]["kind"] == "swiss"
    assert one["config"]["schedule"]["rounds"] == 4
    schedule = await (await client.get(f"/api/tournaments/{tid}/schedule")).json()
    assert schedule["total"] == 10 and {s["round"] for s in schedule["slots"]} == {1}


async def test_the_page_says_which_round_is_played(client: TestClient, store: SqliteStore,
                                                   tmp_path) -> None:
    tid = swiss_tournament(store, tmp_path)
    html = await (await client.get(f"/tournaments/{tid}")).text()
    assert 'Swiss, round <span id="swiss-round">1</span> of 4' in html
    assert "0 of 40 matches played" in html
