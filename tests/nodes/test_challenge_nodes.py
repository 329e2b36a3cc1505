"""Challenges on several nodes sharing one PostgreSQL store: every node's
challenge service sees every open challenge, so a match whose bots are
connected to two nodes must still be played by one of them only; and a
bot's quota of matches waiting counts its challenges on every node."""

from __future__ import annotations

import asyncio

import aiohttp
import pytest

from arena.app import Arena
from arena.storage import open_store
from arena.storage.base import MatchStatus
from arena.tournament.challenge import ChallengeLimits
from tests.nodes.arenas import Bots, add_bots, challenge_nodes, random_bot, until

NAMES = ("north", "south", "east")
LIMITS = ChallengeLimits(per_day=50, in_flight=6, claim_timeout_s=10.0)


def two_nodes(pg_url: str):
    return challenge_nodes(pg_url, NAMES, LIMITS, decision_ms=1000, bank_ms=0,
                           rules={"max_hands": 2})


@pytest.mark.timeout(200)
async def test_a_challenge_match_is_played_by_one_node_only(pg_url):
    async with two_nodes(pg_url) as nodes:
        arenas, stores = nodes.arenas, nodes.stores
        # Every bot is connected to both nodes: both could seat every match.
        bots = Bots.start([random_bot(arena.port, name, i, ladder=True)
                           for arena in arenas for i, name in enumerate(NAMES)])
        try:
            for arena in arenas:
                await until(lambda a=arena: _idle(a, set(NAMES)))
            web = f"http://127.0.0.1:{arenas[0].http_port}"
            async with aiohttp.ClientSession() as http:
                async with http.post(web + "/api/challenges",
                                     json={"opponents": ["south", "east"], "matches": 4},
                                     headers={"Authorization": "Bearer token-north"}) as r:
                    assert r.status == 201, await r.text()
                    cid = (await r.json())["challenge"]["id"]
            store = stores[0]

            async def over():
                return all(s.match_id is not None for s in store.get_schedule(cid))

            await until(over)
            await asyncio.sleep(1.0)  # a second node's copy would have started by now
            matches = store.list_matches(tournament_id=cid, limit=100)
            played = [m for m in matches if m.status is MatchStatus.FINISHED]
            assert len(played) == 4
            assert [m for m in matches if m.status is not MatchStatus.FINISHED] == [], \
                "a match of the challenge was started by two nodes"
        finally:
            await bots.stop()


async def _idle(arena: Arena, names: set[str]) -> bool:
    return names <= set(arena.server.idle_bots())


@pytest.mark.timeout(200)
async def test_the_quota_of_matches_waiting_counts_challenges_asked_on_every_node(pg_url):
    async with two_nodes(pg_url) as nodes:
        arenas, stores = nodes.arenas, nodes.stores
        setup = open_store(pg_url)
        challengers = [f"asker{i}" for i in range(6)]
        add_bots(setup, challengers)  # never connected: their matches stay waiting
        setup.close()
        # The opponent is connected to both nodes, open to challenges.
        bots = Bots.start([random_bot(arena.port, "south", 0, ladder=True) for arena in arenas])
        try:
            for arena in arenas:
                await until(lambda a=arena: _idle(a, {"south"}))
            async with aiohttp.ClientSession() as http:
                async def ask(arena: Arena, who: str) -> int:
                    async with http.post(
                            f"http://127.0.0.1:{arena.http_port}/api/challenges",
                            json={"opponents": ["south"], "matches": 4},
                            headers={"Authorization": f"Bearer token-{who}"}) as r:
                        return r.status

                for who in challengers:
                    # The same bot asks both nodes at once for 4 matches; 6 may wait.
                    answers = await asyncio.gather(ask(arenas[0], who), ask(arenas[1], who))
                    assert sorted(answers) == [201, 429], (who, answers)
            for who in challengers:
                waiting = sum(len(stores[0].get_schedule(r.id))
                              for r in stores[0].list_tournaments()
                              if r.config.get("challenger") == who)
                assert waiting == 4
        finally:
            await bots.stop()
