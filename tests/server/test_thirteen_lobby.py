"""One server, both games: each bot waits for the game its hello names,
tables never mix games, house bots of the table's game fill it."""

from __future__ import annotations

import asyncio

import pytest

from arena.server.lobby import ClaimTimeoutError
from arena.server.server import PlayerSpec
from arena.storage.base import MatchStatus
from tests.server.thirteen_bots import ThirteenBot


async def _start(bot: ThirteenBot) -> dict:
    return await bot.until(lambda m: m["type"] == "match_start")


async def test_bots_of_both_games_each_get_a_table_of_their_own_game(make_server):
    server = await make_server(house_wait_s=None)
    thirteen = [ThirteenBot() for _ in range(4)]
    muushig = [ThirteenBot() for _ in range(5)]
    try:
        # Seven bots are waiting before either game has a full table: mixing
        # games would seat five of them.
        for i, bot in enumerate(thirteen[:3]):
            await bot.join(server.port, f"t{i}")
        for i, bot in enumerate(muushig[:4]):
            await bot.join(server.port, f"m{i}", game=None if i % 2 else "muushig")
        await asyncio.sleep(0.1)
        assert server.tables == {}
        await thirteen[3].join(server.port, "t3")
        await muushig[4].join(server.port, "m4", game="muushig")
        starts = await asyncio.gather(*(_start(b) for b in thirteen + muushig))
        assert {s["game"] for s in starts[:4]} == {"thirteen"}
        assert {s["game"] for s in starts[4:]} == {"muushig"}
        assert sorted(starts[0]["players"]) == ["t0", "t1", "t2", "t3"]
        assert sorted(starts[4]["players"]) == ["m0", "m1", "m2", "m3", "m4"]
        assert len({s["match"] for s in starts}) == 2
        # Both tables play at the same time on the one server.
        assert {t.spec.name for t in server.tables.values()} == {"muushig", "thirteen"}
        await asyncio.gather(*(b.play() for b in thirteen))
    finally:
        for bot in thirteen + muushig:
            await bot.close()
    await server.writer.flush()
    finished = server.store.list_matches(status=MatchStatus.FINISHED)
    assert [m.game for m in finished] == ["thirteen"]


async def test_a_lone_thirteen_bot_gets_house_bots_of_its_game(make_server):
    server = await make_server(house_wait_s=0.05)
    bot = ThirteenBot()
    try:
        await bot.join(server.port, "lonely")
        start = await _start(bot)
        assert start["game"] == "thirteen" and len(start["players"]) == 4
        assert sorted(p for p in start["players"] if p != "lonely") == \
            ["house-strong-1", "house-strong-2", "house-strong-3"]
        end = await bot.play()
    finally:
        await bot.close()
    assert len(end["result"]["totals"]) == 4


async def test_the_rules_of_the_server_stay_with_its_default_game(make_server):
    server = await make_server(house_wait_s=0.05, rules={"max_hands": 50})
    bot = ThirteenBot()
    try:
        await bot.join(server.port, "lonely")
        start = await _start(bot)
    finally:
        await bot.close()
    assert start["game"] == "thirteen" and "max_hands" not in start["rules"]


async def test_a_claim_takes_only_a_connection_of_the_matchs_game(make_server):
    server = await make_server(matchmaking=False)
    wrong, right = ThirteenBot(), ThirteenBot()
    house = [PlayerSpec(f"house-strong-{i}", house="strong") for i in range(3)]
    try:
        await wrong.join(server.port, "x", game="muushig")
        with pytest.raises(ClaimTimeoutError, match="thirteen"):
            await server.play_match([PlayerSpec("x"), *house], game="thirteen",
                                    claim_timeout_s=0.2)
        await wrong.close()
        await right.join(server.port, "x")
        play = asyncio.ensure_future(server.play_match([PlayerSpec("x"), *house],
                                                       game="thirteen", claim_timeout_s=5))
        await right.play()
        outcome = await asyncio.wait_for(play, 10)
    finally:
        await right.close()
    assert outcome.result is not None
    assert server.store.get_match(outcome.match_id).game == "thirteen"


async def test_the_servers_game_is_the_default_of_a_hello_without_one(make_server):
    server = await make_server(game="thirteen", house_wait_s=0.05)
    bot = ThirteenBot()
    try:
        await bot.join(server.port, "plain", game=None)
        start = await _start(bot)
    finally:
        await bot.close()
    assert start["game"] == "thirteen"
