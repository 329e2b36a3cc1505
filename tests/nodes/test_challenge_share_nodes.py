"""The share of tables challenges may take is one share of the whole store,
not one per node: with room for one challenge table and node B playing
one, node A starts none until B's is over, however idle A is."""

from __future__ import annotations

import aiohttp
import pytest

from arena.app import Arena
from arena.storage.base import MatchStatus
from arena.tournament.challenge import ChallengeLimits
from tests.nodes.arenas import Bots, challenge_nodes, random_bot, until

# Room for exactly one challenge table while nothing else runs.
LIMITS = ChallengeLimits(per_day=50, in_flight=6, claim_timeout_s=10.0, table_share=0.25,
                         min_tables=1)


# Bounds, not targets: two slow matches one after the other on a loaded
# machine took more than 150 s for one of these waits.
async def _until(check, timeout_s: float = 300.0, every_s: float = 0.05):
    return await until(check, timeout_s, every_s)


async def _ask(arena: Arena, who: str, opponent: str) -> str:
    async with aiohttp.ClientSession() as http:
        async with http.post(f"http://127.0.0.1:{arena.http_port}/api/challenges",
                             json={"opponents": [opponent], "matches": 1},
                             headers={"Authorization": f"Bearer token-{who}"}) as r:
            assert r.status == 201, await r.text()
            return (await r.json())["challenge"]["id"]


@pytest.mark.timeout(600)
async def test_the_challenge_table_share_counts_every_node_of_the_store(pg_url):
    async with challenge_nodes(pg_url, ("north", "south", "east", "west"), LIMITS,
                               decision_ms=2000, bank_ms=0, rules={"max_hands": 3}) as nodes:
        arenas, stores = nodes.arenas, nodes.stores
        node_a, node_b = arenas
        ticks = 0
        original = node_a.challenges.tick

        async def counted_tick() -> None:
            nonlocal ticks
            await original()
            ticks += 1

        node_a.challenges.tick = counted_tick
        # north and south play slowly on node B; east and west are idle on node A.
        bots = Bots.start(
            [random_bot(node_b.port, n, i, ladder=True, threaded=True, pause_s=0.1)
             for i, n in enumerate(("north", "south"))]
            + [random_bot(node_a.port, n, i, ladder=True, threaded=True)
               for i, n in enumerate(("east", "west"))])
        store = stores[0]

        def running(cid: str) -> list:
            return store.list_matches(tournament_id=cid, status=MatchStatus.RUNNING, limit=10)

        def finished(cid: str) -> list:
            return store.list_matches(tournament_id=cid, status=MatchStatus.FINISHED, limit=10)

        try:
            await _until(lambda: {"north", "south"} <= set(node_b.server.idle_bots()))
            await _until(lambda: {"east", "west"} <= set(node_a.server.idle_bots()))
            on_b = await _ask(node_b, "north", "south")
            await _until(lambda: running(on_b))
            on_a = await _ask(node_a, "east", "west")
            # Node A looks at the open challenges several times while B's table runs.
            seen = ticks
            await _until(lambda: ticks >= seen + 3)
            assert running(on_b), "node B's challenge match ended too soon to tell"
            assert running(on_a) == [] and finished(on_a) == [], \
                "node A started a second challenge table while node B's took the whole share"
            # Once B's table is over, A plays its own.
            await _until(lambda: finished(on_b))
            await _until(lambda: finished(on_a))
        finally:
            await bots.stop()
