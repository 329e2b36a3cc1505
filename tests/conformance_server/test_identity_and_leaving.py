"""Protocol §2 identity in open mode, §7 re-seating and leaving, and the
page's ``welcome`` example."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from arena.auth import hash_token
from arena.storage.base import MatchStatus
from tests.conformance_server.conftest import directed, joined
from tests.conformance_server.test_framing import refused
from tests.conformance_server.wire import ENCODINGS, MSGPACK, SpecBot

README = (Path(__file__).resolve().parents[2] / "protocol" / "README.md").read_text()


# -- identity ------------------------------------------------------------------
async def test_another_bots_token_with_another_name_is_refused_and_takes_no_seat(make_server):
    server = await make_server(matchmaking=False, decision_ms=10_000)
    async with directed(server, ["alpha", "steady", None, None, None], seed="identity") as match:
        alpha = await joined(server.port, "alpha", token="alpha-token")
        steady = await joined(server.port, "steady")  # holds its requests: the match waits
        start = await alpha.until(lambda m: m["type"] == "match_start")
        await alpha.close()  # alpha drops: its seat waits for alpha's token
        thief = await SpecBot().connect(server.port)
        await thief.send({"type": "hello", "protocol": 1, "token": "alpha-token", "name": "beta"})
        error = (await thief.closed_after())[-1]
        assert error["code"] == "auth_failed" and "alpha" in error["message"], error
        back = await joined(server.port, "alpha", token="alpha-token")  # the owner comes back
        again = await back.until(lambda m: m["type"] == "match_start")
        assert again["match"] == start["match"] and again["seat"] == 0
        await asyncio.gather(back.play_to_end(), steady.play_to_end())
        outcome = await match
        assert outcome.players[:2] == ["alpha", "steady"] and outcome.result is not None
        for bot in (back, steady):
            await bot.close()


async def test_a_name_belongs_to_the_first_token_that_claims_it(make_server):
    server = await make_server()
    first = await joined(server.port, "tuul", token="first-token")
    await first.close()  # owned for the server's lifetime, connected or not
    second = await SpecBot().connect(server.port)
    await second.send({"type": "hello", "protocol": 1, "token": "second-token", "name": "tuul"})
    error = (await second.closed_after())[-1]
    assert error["code"] == "auth_failed" and "tuul" in error["message"] and "taken" in error["message"]
    again = await joined(server.port, "tuul", token="first-token")
    await again.close()


async def test_the_same_token_may_leave_the_name_out_and_keeps_its_name(make_server):
    server = await make_server()
    named = await joined(server.port, "eej", token="eej-token")
    bare = await SpecBot().connect(server.port)
    welcome = await bare.hello("eej-token", name=None)
    assert welcome["type"] == "welcome" and welcome["bot"] == "eej"
    for bot in (named, bare):
        await bot.close()


async def test_a_remote_token_cannot_take_the_name_of_a_bot_the_arena_started(make_server):
    server = await make_server()
    local_token = server.local_token("house-of-mine")
    impostor = await SpecBot().connect(server.port)
    await impostor.send({"type": "hello", "protocol": 1, "token": "other", "name": "house-of-mine"})
    await refused(impostor, "auth_failed")
    mine = await SpecBot().connect(server.port)
    assert (await mine.hello(local_token, None))["bot"] == "house-of-mine"
    await mine.close()


async def test_the_name_of_a_bot_the_arena_started_stays_the_arenas_between_its_runs(
        make_server):
    """A hosted bot's run gives its token back when it stops; the next run
    gets a new one. In between, the name is still not a remote token's."""
    server = await make_server()
    token = server.local_token("mybot")
    mine = await SpecBot().connect(server.port)
    assert (await mine.hello(token, None))["bot"] == "mybot"
    await mine.close()
    server.local_tokens.revoke(token)  # the run stopped
    await server.writer.flush()
    impostor = await SpecBot().connect(server.port)
    await impostor.send({"type": "hello", "protocol": 1, "token": "other", "name": "mybot"})
    error = (await impostor.closed_after())[-1]
    assert error["code"] == "auth_failed" and "mybot" in error["message"], error
    assert "arena starts" in error["message"], error
    again = await SpecBot().connect(server.port)  # the next run, with its own token
    assert (await again.hello(server.local_token("mybot"), None))["bot"] == "mybot"
    await again.close()


async def test_a_registered_bot_the_arena_also_hosts_keeps_its_own_token(make_server):
    """The arena holding a hosted bot's name between its runs keeps
    impostors out, not the bot's owner: the token registered for the name
    still says hello under it (one bot, run by the arena or by its author)."""
    server = await make_server()
    server.store.add_bot("ownbot", hash_token("own-secret"))
    token = server.local_token("ownbot")  # a hosted run of it
    server.local_tokens.revoke(token)  # ... that stopped
    await server.writer.flush()
    owner = await SpecBot().connect(server.port)
    assert (await owner.hello("own-secret", "ownbot"))["bot"] == "ownbot"
    await owner.close()
    impostor = await SpecBot().connect(server.port)
    await impostor.send({"type": "hello", "protocol": 1, "token": "other", "name": "ownbot"})
    error = (await impostor.closed_after())[-1]
    assert error["code"] == "auth_failed" and "ownbot" in error["message"], error


# -- re-seating and leaving ------------------------------------------------------
@pytest.mark.parametrize("encoding", ENCODINGS)
async def test_after_match_end_a_connection_is_seated_again(make_server, encoding):
    server = await make_server(house_wait_s=0.0, decision_ms=1000)
    bot = await joined(server.port, "again", encoding)
    first = await bot.play_to_end()
    start = await bot.until(lambda m: m["type"] == "match_start")
    assert start["match"] != first["match"]
    await bot.close()


@pytest.mark.parametrize("encoding", ENCODINGS)
async def test_max_matches_ends_with_bye_and_leaves_no_aborted_match(make_server, encoding):
    server = await make_server(house_wait_s=0.0, decision_ms=1000)
    bot = await SpecBot(encoding).connect(server.port)
    assert (await bot.hello("once-token", "once", max_matches=2))["type"] == "welcome"
    ends = [await bot.play_to_end(), await bot.play_to_end()]
    after = await bot.closed_after(timeout=5)
    assert [m["type"] for m in after] == ["bye"], after
    await asyncio.sleep(0.2)
    matches = server.store.list_matches(bot="once")
    assert sorted(m.id for m in matches) == sorted(e["match"] for e in ends)
    assert all(m.status is MatchStatus.FINISHED for m in matches)


@pytest.mark.parametrize("value", [0, -1, "two", True])
async def test_max_matches_must_be_an_integer_of_at_least_one(make_server, value):
    server = await make_server()
    bot = await SpecBot(MSGPACK).connect(server.port)
    await bot.send({"type": "hello", "protocol": 1, "token": "t", "name": "n", "max_matches": value})
    error = (await bot.closed_after())[-1]
    assert error["code"] == "malformed" and "max_matches" in error["message"]


async def test_bye_while_waiting_in_the_lobby_leaves_cleanly(make_server):
    server = await make_server(house_wait_s=None)
    bot = await joined(server.port, "leaver")
    assert server.lobby.idle_bots() == ["leaver"]
    await bot.send({"type": "bye"})
    assert await bot.closed_after() == []
    assert server.lobby.idle_bots() == [] and server.tables == {}
    assert server.store.list_matches(bot="leaver") == []


# -- the page's welcome example ---------------------------------------------------
async def test_the_welcome_example_shows_what_the_server_sends(make_server):
    server = await make_server()
    example = json.loads(re.search(r'^(\{"type":"welcome".*\})$', README, flags=re.M).group(1))
    bot = await SpecBot().connect(server.port)
    welcome = await bot.hello("tok", example["bot"])
    assert welcome == example
    await bot.close()
