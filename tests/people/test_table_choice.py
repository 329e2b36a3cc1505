"""A person chooses the table: house bots at once (of the strength they
pick, where a game has several), or bots waiting in the lobby whose hello
opted in to playing people (any, or the ones they name). A bot that did
not opt in is never seated with a person, whatever the choice."""

from __future__ import annotations

import asyncio
from pathlib import Path
from collections.abc import Iterator
from typing import Any

import aiohttp
import pytest

from tests.people.helpers import people_site
from tests.server.rawbot import RawBot

# An open server (any token); nobody is matched with house bots while
# these tests look at the lobby.
QUIET: dict[str, Any] = {"house_wait_s": 600.0, "open": True}


_KEEP: list[RawBot] = []  # a dropped RawBot closes its connection


@pytest.fixture(autouse=True)
def _forget_bots() -> Iterator[None]:
    yield
    _KEEP.clear()


async def _bot(port: int, name: str, *, people: bool, game: str = "muushig") -> RawBot:
    bot = await RawBot().connect(port)
    _KEEP.append(bot)
    message: dict[str, Any] = {"type": "hello", "protocol": 1, "token": f"t-{name}",
                               "name": name, "game": game}
    if people:
        message["people"] = True
    await bot.send(message)
    welcome = await bot.recv()
    assert welcome is not None and welcome["type"] == "welcome", welcome
    return bot


async def _in_lobby(arena: Any, names: set[str]) -> None:
    async with asyncio.timeout(30):
        while not names <= set(arena.server.lobby.idle_bots()):
            await asyncio.sleep(0.02)


async def _sit(http: aiohttp.ClientSession, base: str, token: str, game: str,
               choice: dict[str, Any] | None) -> tuple[int, Any]:
    async with http.post(f"{base}/api/play/{game}", json=choice,
                         headers={"Authorization": f"Bearer {token}"}) as r:
        return r.status, await r.json()


async def _choices(http: aiohttp.ClientSession, base: str, game: str) -> Any:
    async with http.get(f"{base}/api/play/{game}/choices") as r:
        assert r.status == 200, await r.text()
        return await r.json()


async def test_the_choices_list_house_strengths_and_opted_in_bots_only(tmp_path: Path) -> None:
    async with people_site(tmp_path, **QUIET) as site:
        arena, base, http = site.arena, site.base, site.http
        await _bot(arena.port, "willing", people=True)
        await _bot(arena.port, "shy", people=False)
        await _bot(arena.port, "other-game", people=True, game="thirteen")
        await _in_lobby(arena, {"willing", "shy", "other-game"})
        choices = await _choices(http, base, "muushig")
        assert [b["bot"] for b in choices["lobby"]] == ["willing"]
        house = {h["strategy"]: h for h in choices["house"]}
        assert set(house) == {"random", "heuristic"}
        assert house["random"]["strength"] < house["heuristic"]["strength"]
        assert house["heuristic"]["default"] and not house["random"]["default"]
        thirteen = await _choices(http, base, "thirteen")
        assert [b["bot"] for b in thirteen["lobby"]] == ["other-game"]
        assert {h["strategy"] for h in thirteen["house"]} == {"random", "strong"}


async def test_a_person_picks_house_bots_of_a_strength_and_no_lobby_bot_sits(
        tmp_path: Path) -> None:
    async with people_site(tmp_path, **QUIET) as site:
        arena, base, http = site.arena, site.base, site.http
        await _bot(arena.port, "willing", people=True)
        await _in_lobby(arena, {"willing"})
        token = await site.person("bolor")
        status, table = await _sit(http, base, token, "muushig",
                                   {"opponents": "house", "house": "random"})
        assert status == 200, table
        others = [p for i, p in enumerate(table["players"]) if i != table["seat"]]
        assert others and all(p.startswith("house-random-") for p in others), others
        assert "willing" in arena.server.lobby.idle_bots()  # still waiting, not seated


async def test_a_person_picks_an_opted_in_bot_by_name(tmp_path: Path) -> None:
    async with people_site(tmp_path, **QUIET) as site:
        arena, base, http = site.arena, site.base, site.http
        first = await _bot(arena.port, "first", people=True)
        await _bot(arena.port, "second", people=True)
        await _in_lobby(arena, {"first", "second"})
        token = await site.person("temuulen")
        status, table = await _sit(http, base, token, "muushig",
                                   {"opponents": "lobby", "bots": ["second"]})
        assert status == 200, table
        assert "second" in table["players"] and "first" not in table["players"]
        assert "first" in arena.server.lobby.idle_bots()
        assert first.seen[-1]["type"] == "welcome"  # nothing sent to the bot not picked


async def test_a_bot_that_did_not_opt_in_is_never_seated_with_a_person(tmp_path: Path) -> None:
    async with people_site(tmp_path, **QUIET) as site:
        arena, base, http = site.arena, site.base, site.http
        await _bot(arena.port, "shy", people=False)
        await _in_lobby(arena, {"shy"})
        token = await site.person("ganaa")
        # Asked for by name, or any lobby bot: refused, with the reason.
        status, answer = await _sit(http, base, token, "muushig",
                                    {"opponents": "lobby", "bots": ["shy"]})
        assert status == 409 and "shy" in answer["error"]["message"], answer
        status, answer = await _sit(http, base, token, "muushig", {"opponents": "lobby"})
        assert status == 409 and "opted in" in answer["error"]["message"], answer
        # The default (lobby bots that opted in first, then house bots).
        status, table = await _sit(http, base, token, "muushig", None)
        assert status == 200, table
        assert "shy" not in table["players"]
        assert "shy" in arena.server.lobby.idle_bots()


async def test_a_choice_that_cannot_be_is_refused_with_what_can(tmp_path: Path) -> None:
    async with people_site(tmp_path, **QUIET) as site:
        base, http = site.base, site.http
        token = await site.person("dulmaa")
        for choice, says in [({"opponents": "house", "house": "strong"}, "heuristic"),
                             ({"opponents": "everyone"}, "house"),
                             ({"opponents": "lobby", "bots": "x"}, "list"),
                             ({"opponents": "house", "bots": ["x"]}, "lobby")]:
            status, answer = await _sit(http, base, token, "muushig", choice)
            assert status == 400 and says in answer["error"]["message"], (choice, answer)
