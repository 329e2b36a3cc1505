"""``GET /api/matches/{id}/notation`` and ``GET /api/dataset`` serve only
public matches: never a running one, an aborted one, or one whose decks a
rotation of its duplicate tournament has still to play. On both stores."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import pytest
from aiohttp.test_utils import TestClient, TestServer

from arena.live import LiveHub
from arena.metrics import Metrics
from arena.notation import parse_notation, replay_notation
from arena.storage.base import MatchRecord, MatchStatus, ScheduledMatch, TournamentRecord
from arena.storage.base import TournamentStatus
from arena.web.app import make_app

from .matches import play, store_match


@pytest.fixture
async def client(any_store) -> AsyncIterator[TestClient]:
    app = make_app(any_store, hub=LiveHub(), metrics=Metrics())
    async with TestClient(TestServer(app)) as c:
        yield c


def _embargoed_pair(store) -> None:
    """A duplicate tournament whose second rotation of table s0 is unplayed."""
    store.create_tournament(
        TournamentRecord(id="dup", name="Cup", game="muushig", config={}, status=
                         TournamentStatus.RUNNING, created_at=time.time()),
        [ScheduledMatch(tournament_id="dup", slot=i, players=[f"bot{j}" for j in range(3)],
                        seed="s0") for i in range(2)])
    store_match(store, play("muushig", {"players": 3, "max_hands": 2}, 5), match_id="rot0",
                tournament_id="dup", seed="s0")
    store.complete_slot("dup", 0, "rot0")


async def test_a_public_match_has_its_notation(client: TestClient, any_store) -> None:
    store_match(any_store, play("thirteen", {"players": 2, "deals": 2}, 1), match_id="pub")
    response = await client.get("/api/matches/pub/notation")
    assert response.status == 200 and response.content_type == "text/plain"
    replayed = replay_notation(parse_notation(await response.text()))
    assert replayed.notation.match_id == "pub"


async def test_an_embargoed_match_has_no_notation_yet(client: TestClient, any_store) -> None:
    _embargoed_pair(any_store)
    response = await client.get("/api/matches/rot0/notation")
    assert response.status == 409
    assert "rotation" in (await response.json())["error"]["message"]


async def test_a_running_match_has_no_notation(client: TestClient, any_store) -> None:
    any_store.create_match(MatchRecord(id="run", game="muushig", players=["a", "b"], rules={},
                                       limits={}, status=MatchStatus.RUNNING,
                                       started_at=time.time()))
    response = await client.get("/api/matches/run/notation")
    assert response.status == 409


async def test_the_dataset_pages_through_public_matches_only(client: TestClient,
                                                             any_store) -> None:
    for i in range(5):
        store_match(any_store, play("muushig" if i % 2 else "thirteen",
                                    {"players": 2, **({"max_hands": 2} if i % 2 else
                                                      {"deals": 1})}, i),
                    match_id=f"p{i}", finished_at=1_000_000.0 + i)
    _embargoed_pair(any_store)
    any_store.create_match(MatchRecord(id="run", game="muushig", players=["a", "b"], rules={},
                                       limits={}, status=MatchStatus.RUNNING,
                                       started_at=time.time()))
    seen: list[str] = []
    cursor: int | None = 0
    while cursor is not None:
        body = await (await client.get(f"/api/dataset?limit=2&cursor={cursor}")).json()
        assert len(body["records"]) <= 2
        seen += [r["id"] for r in body["records"]]
        assert all(r["schema"] == "arena-match/1" and r["events"] for r in body["records"])
        cursor = body["next"]
    assert sorted(seen) == [f"p{i}" for i in range(5)]
    body = await (await client.get("/api/dataset?game=thirteen&limit=100")).json()
    assert sorted(r["id"] for r in body["records"]) == ["p0", "p2", "p4"]
    body = await (await client.get("/api/dataset?after=1970-01-12T13:46:42")).json()
    assert sorted(r["id"] for r in body["records"]) == ["p2", "p3", "p4"]
