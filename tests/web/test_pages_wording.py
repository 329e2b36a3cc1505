"""What the pages and the API say: wording, one rating format, units, the
separation of neighbours, and small API answers a reader stumbled on."""

from __future__ import annotations

import re

from aiohttp.test_utils import TestClient

from arena.live import LiveHub
from arena.web.render import rating_text, standings_table
from arena.storage.sqlite import SqliteStore

from .conftest import ADMIN
from .helpers import finish_in_store, make_match


async def html_of(client: TestClient, path: str, status: int = 200) -> str:
    response = await client.get(path)
    assert response.status == status, (path, response.status)
    return await response.text()


async def test_an_empty_list_of_finished_matches_reads_as_a_sentence(
        client: TestClient) -> None:
    html = await html_of(client, "/")
    assert "No matches for" not in html
    assert "No match has finished yet." in html


async def test_ratings_have_one_format_and_the_page_says_what_ranks(
        client: TestClient, store: SqliteStore) -> None:
    finish_in_store(store, make_match("m1"))
    row = (await (await client.get("/api/standings")).json())["standings"][0]
    shown = f'{row["rating"]:.1f} ({row["rating_mu"]:.1f} ± {row["rating_sigma"]:.1f})'
    assert rating_text(row["rating"], row["rating_mu"], row["rating_sigma"]) == shown
    ladder = await html_of(client, "/")
    assert shown in ladder
    assert "Ranked by stars (★), then by the lower score sum" in ladder
    assert "μ − 3σ" in ladder
    bot = await html_of(client, f"/bots/{row['bot']}?scope=ladder")
    assert shown in bot


async def test_latency_columns_carry_their_unit(client: TestClient, store: SqliteStore) -> None:
    finish_in_store(store, make_match("m1"))
    ladder = await html_of(client, "/")
    assert ">Latency (ms)<" in ladder
    match = await html_of(client, "/matches/m1")
    assert ">Median latency (ms)<" in match


def test_standings_say_whether_neighbours_are_separated() -> None:
    rows = [
        {"rank": 1, "bot": "a", "vs_next": {"significant": True, "p_value": 0.004,
                                            "method": "sign test", "more_matches": None}},
        {"rank": 2, "bot": "b", "vs_next": {"significant": False, "p_value": 0.31,
                                            "method": "sign test", "more_matches": 40}},
        {"rank": 3, "bot": "c"},
    ]
    html = standings_table(rows, "Standings")
    assert ">vs next<" in html
    cells = re.findall(r'<td class="sep[^"]*">(.*?)</td>', html)
    assert len(cells) == 3
    assert "separated" in cells[0] and "p = 0.004" in cells[0] and "sign test" in cells[0]
    assert "not yet" in cells[1] and "about 40 more matches" in cells[1]
    assert cells[2] == ""


def test_standings_without_separation_have_no_such_column() -> None:
    assert "vs next" not in standings_table([{"rank": 1, "bot": "a"}], "Standings")


async def test_a_401_names_the_bot_without_a_stray_apostrophe(client: TestClient) -> None:
    await client.post("/api/bots", json={"name": "newbot"})
    body = await (await client.post("/api/bots/newbot/token")).json()
    message = body["error"]["message"]
    assert "''" not in message
    assert "'newbot'" in message


async def test_live_matches_answer_a_real_limit_and_an_event_count(
        client: TestClient, hub: LiveHub) -> None:
    empty = await (await client.get("/api/matches/live")).json()
    assert empty["limit"] > 0 and empty["total"] == 0
    hub.match_started("now1", {"players": ["alpha"], "game": "muushig"})
    hub.match_events("now1", [({"kind": "round_start", "round": 0, "dealer": 0,
                             "scores": [15] * 5}, None)])
    body = await (await client.get("/api/matches/live")).json()
    match = body["matches"][0]
    assert match["events_count"] == 1 and "events" not in match


async def test_removing_a_removed_bot_again_is_410(client: TestClient) -> None:
    auth = {"Authorization": f"Bearer {ADMIN}"}
    await client.post("/api/bots", json={"name": "doomed"}, headers=auth)
    assert (await client.delete("/api/bots/doomed", headers=auth)).status == 200
    again = await client.delete("/api/bots/doomed", headers=auth)
    assert again.status == 410
    assert "removed" in (await again.json())["error"]["message"]
