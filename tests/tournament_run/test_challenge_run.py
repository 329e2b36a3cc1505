"""Challenges end to end: a bot's owner asks over HTTP and on the command
line, the arena plays the matches with connected bots and house bots, the
quota refuses what goes over it, and the ladder never sees the matches.
Both stores."""

from __future__ import annotations

import asyncio

import aiohttp
import pytest

from arena.app import Arena
from arena.cli import main
from arena.server.config import ServerConfig
from arena.server.matches import PlayerSpec
from arena.storage import open_store
from arena.tournament.challenge import ChallengeLimits, is_challenge_id
from tests.nodes.arenas import Bots, add_bots, random_bot, until
from tests.storage.conftest import db_location  # noqa: F401 - fixtures

LIMITS = ChallengeLimits(per_day=10, in_flight=3, claim_timeout_s=10.0)


async def _until(check, timeout_s: float = 90.0):
    return await until(check, timeout_s)


@pytest.mark.timeout(180)
async def test_a_challenge_is_played_unrated_and_the_quota_refuses_more(db_location, capsys):
    store = open_store(db_location)
    add_bots(store, ("north", "south", "east"))
    arena = Arena(ServerConfig(port=0, http_port=0, matchmaking=False, decision_ms=1000,
                               bank_ms=0), store, challenges=LIMITS)
    await arena.start()
    bots = Bots.start([random_bot(arena.port, name, i, ladder=name != "north")
                       for i, name in enumerate(("north", "south", "east"))])
    web = f"http://127.0.0.1:{arena.http_port}"
    try:
        async with aiohttp.ClientSession() as http:
            async def get(path: str):
                async with http.get(web + path) as r:
                    return r.status, await r.json()

            await _until(lambda: _all_idle(arena, {"north", "south", "east"}))
            # One rated ladder match first: its standings must not move.
            ladder_match = await arena.server.play_match(
                [PlayerSpec("north"), PlayerSpec("south"), PlayerSpec("east"),
                 PlayerSpec("house-heuristic-1", house="heuristic"),
                 PlayerSpec("house-heuristic-2", house="heuristic")])
            assert ladder_match.aborted is None
            _, before = await get("/api/standings?scope=ladder")
            _, all_before = await get("/api/standings?scope=all")

            ask = {"opponents": ["south", "east"], "matches": 2}
            # The quota counts matches waiting: none may be played before the
            # refusal below is asked for (a quick match would free the quota).
            playing = arena.challenges.tick
            arena.challenges.tick = _nothing
            async with http.post(web + "/api/challenges", json=ask) as r:
                assert r.status == 401  # who asks is the bot whose token it is
            async with http.post(web + "/api/challenges", json={**ask, "opponents": ["west"]},
                                 headers={"Authorization": "Bearer token-north"}) as r:
                assert r.status == 400
                assert "not open to challenges in muushig: west" in \
                    (await r.json())["error"]["message"]
            async with http.post(web + "/api/challenges", json=ask,
                                 headers={"Authorization": "Bearer token-north"}) as r:
                assert r.status == 201, await r.text()
                challenge = (await r.json())["challenge"]
            cid = challenge["id"]
            assert is_challenge_id(cid) and challenge["state"] in ("pending", "running")
            # The command line asks for one more: 3 waiting, the quota's limit.
            assert await asyncio.to_thread(
                main, ["challenge", "south", "-n", "1", "--server", web,
                       "--token", "token-north"]) == 0
            assert "challenge challenge_" in capsys.readouterr().out
            # A fourth waiting match is over the quota: refused, nothing stored.
            async with http.post(web + "/api/challenges", json={**ask, "matches": 1},
                                 headers={"Authorization": "Bearer token-north"}) as r:
                assert r.status == 429
                assert r.headers["Retry-After"] == "60"
                assert "3 challenge matches waiting to be played" in \
                    (await r.json())["error"]["message"]
            assert len(store.list_tournaments()) == 2
            arena.challenges.tick = playing

            async def finished():
                _, d = await get(f"/api/challenges/{cid}")
                return d if d["challenge"]["state"] == "finished" else None

            detail = await _until(finished)
            c = detail["challenge"]
            assert (c["played"], c["waiting"], c["given_up"]) == (2, 0, 0)
            results = {row["bot"]: row for row in detail["results"]}
            assert {"north", "south", "east"} <= set(results)
            assert all(results[b]["matches"] == 2 for b in ("north", "south", "east"))
            assert results["north"]["points_ci_low"] is not None
            for match_id in c["match_ids"]:
                record = store.get_match(match_id)
                assert record.tournament_id == cid
                assert sorted(p for p in record.players if not p.startswith("house-")) == \
                    ["east", "north", "south"]
            async with http.get(web + f"/challenges/{cid}") as r:
                page = await r.text()
                assert r.status == 200 and "Challenge by north" in page
                assert "Results of the challenge" in page

            # Never rated: the ladder and the all-matches standings are as before.
            _, after = await get("/api/standings?scope=ladder")
            _, all_after = await get("/api/standings?scope=all")
            assert after == before and all_after == all_before
            _, listed = await get("/api/tournaments")
            assert listed["total"] == 0  # challenges are not tournaments to a visitor
            _, mine = await get("/api/challenges?bot=north")
            assert len(mine["challenges"]) == 2

            assert await asyncio.to_thread(main, ["challenge", "--show", cid,
                                                  "--server", web]) == 0
            shown = capsys.readouterr().out
            assert f"challenge {cid} by north" in shown and "2 of 2 played" in shown
    finally:
        await bots.stop()
        await arena.stop()
        store.close()


async def _nothing() -> None:
    """A challenge service's tick that starts nothing."""


async def _all_idle(arena: Arena, names: set[str]) -> bool:
    return names <= set(arena.server.idle_bots())
