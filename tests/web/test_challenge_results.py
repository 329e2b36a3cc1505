"""A challenge's result table is over every match its record says was
played: the detail never pairs ``played: 2`` with results of one match
(the standings cache may keep a table while it cools down; a challenge's
own page must not show it behind its own count)."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import pytest
from aiohttp.test_utils import TestClient, TestServer

from arena.live import LiveHub
from arena.metrics import Metrics
from arena.storage.base import MatchRecord, MatchStatus, SeatFaults
from arena.storage.sqlite import SqliteStore
from arena.tournament.challenge import ChallengeLimits, ChallengeRequest
from arena.tournament.challenge_store import create_challenge
from arena.web.app import make_app


@pytest.fixture
async def challenge_client(store: SqliteStore) -> AsyncIterator[TestClient]:
    app = make_app(store, hub=LiveHub(), metrics=Metrics(), challenges=ChallengeLimits())
    async with TestClient(TestServer(app)) as c:
        yield c


def play_slot(store: SqliteStore, cid: str, slot: int) -> None:
    players = store.get_schedule(cid)[slot].players
    match_id = f"{cid}-m{slot}"
    store.create_match(MatchRecord(id=match_id, game="muushig", players=list(players),
                                   rules={}, limits={}, status=MatchStatus.RUNNING,
                                   started_at=time.time(), tournament_id=cid))
    store.finish_match(match_id, result={"stars": [1, 0, 0, 0, 0], "sums": [0] * 5,
                                         "ranks": [1, 2, 3, 4, 5]},
                       reveal=[], faults=[SeatFaults() for _ in range(5)],
                       latency_ms=[[] for _ in range(5)], finished_at=time.time(),
                       slot=(cid, slot))


async def test_the_results_count_every_played_match(challenge_client: TestClient,
                                                    store: SqliteStore) -> None:
    cid = create_challenge(store, ChallengeRequest(challenger="north", game="muushig",
                                                   opponents=("south",), matches=2),
                           limits=ChallengeLimits(), now=time.time(), seats=5,
                           house_bot="heuristic").id
    play_slot(store, cid, 0)
    first = await (await challenge_client.get(f"/api/challenges/{cid}")).json()
    assert first["challenge"]["played"] == 1
    assert {r["bot"]: r["matches"] for r in first["results"]}["north"] == 1
    play_slot(store, cid, 1)
    second = await (await challenge_client.get(f"/api/challenges/{cid}")).json()
    assert second["challenge"]["played"] == 2
    assert {r["bot"]: r["matches"] for r in second["results"]}["north"] == 2
    page = await (await challenge_client.get(f"/challenges/{cid}")).text()
    assert "2 played of 2 asked" in page
