"""People and bots share one namespace in every registration mode: a bot
never takes a person's name (HTTP registration, ``arena bots add``, a
hello on a server with ``--any-token``), and a person never takes a bot's.
On both stores."""

from __future__ import annotations

from pathlib import Path

import aiohttp
import pytest

from arena.cli import main
from arena.storage import open_store
from tests.people.helpers import people_arena, register
from tests.server.rawbot import RawBot


async def _person_status(http: aiohttp.ClientSession, base: str, name: str) -> int:
    async with http.post(f"{base}/api/people", json={"name": name}) as r:
        return r.status


async def test_http_registration_refuses_a_persons_name(tmp_path: Path, db_location: str) -> None:
    store = open_store(db_location)
    try:
        async with people_arena(tmp_path, store, db=db_location) as (_, base), \
                aiohttp.ClientSession() as http:
            await register(http, base, "alice")
            async with http.post(f"{base}/api/bots", json={"name": "alice"}) as r:
                assert r.status == 409, await r.text()
            assert store.get_bot("alice").kind == "person"  # type: ignore[union-attr]
    finally:
        store.close()


async def test_a_person_cannot_take_a_registered_bots_name(tmp_path: Path,
                                                           db_location: str) -> None:
    store = open_store(db_location)
    try:
        async with people_arena(tmp_path, store, db=db_location) as (_, base), \
                aiohttp.ClientSession() as http:
            async with http.post(f"{base}/api/bots", json={"name": "robo"}) as r:
                assert r.status == 201, await r.text()
            assert await _person_status(http, base, "robo") == 409
            assert store.get_bot("robo").kind == "remote"  # type: ignore[union-attr]
    finally:
        store.close()


def test_arena_bots_add_refuses_a_persons_name(db_location: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    store = open_store(db_location)
    try:
        store.add_bot("alice", "person-token-hash", kind="person")
    finally:
        store.close()
    assert main(["bots", "add", "alice", "--db", db_location]) != 0
    assert "exists already" in capsys.readouterr().err
    store = open_store(db_location)
    try:
        assert store.get_bot("alice").kind == "person"  # type: ignore[union-attr]
    finally:
        store.close()


async def test_a_hello_on_an_open_server_cannot_take_a_persons_name(tmp_path: Path,
                                                                    db_location: str) -> None:
    store = open_store(db_location)
    try:
        async with people_arena(tmp_path, store, db=db_location, open=True) as (arena, base), \
                aiohttp.ClientSession() as http:
            await register(http, base, "alice")
            bot = await RawBot().connect(arena.port)
            answer = await bot.hello(token="any-token-at-all", name="alice")
            assert answer is not None and answer["type"] == "error", answer
            assert answer["code"] == "auth_failed" and "person" in answer["message"]
            assert await bot.recv() is None  # closed
            # Another name is fine, and the person's record is untouched.
            other = await RawBot().connect(arena.port)
            welcome = await other.hello(token="any-token-at-all", name="alice-bot")
            assert welcome is not None and welcome["type"] == "welcome", welcome
            assert store.get_bot("alice").kind == "person"  # type: ignore[union-attr]
    finally:
        store.close()


async def test_a_person_cannot_take_the_name_of_a_bot_on_an_open_server(
        tmp_path: Path, db_location: str) -> None:
    store = open_store(db_location)
    try:
        async with people_arena(tmp_path, store, db=db_location, open=True) as (arena, base), \
                aiohttp.ClientSession() as http:
            bot = await RawBot().connect(arena.port)
            welcome = await bot.hello(token="bobs-token", name="bob")
            assert welcome is not None and welcome["type"] == "welcome", welcome
            assert await _person_status(http, base, "bob") == 409
            # The same bot comes back with its token after a restart of the
            # server: its name is still its own, still no person's.
        async with people_arena(tmp_path, store, db=db_location, open=True) as (arena, base), \
                aiohttp.ClientSession() as http:
            assert await _person_status(http, base, "bob") == 409
            again = await RawBot().connect(arena.port)
            welcome = await again.hello(token="bobs-token", name="bob")
            assert welcome is not None and welcome["type"] == "welcome", welcome
    finally:
        store.close()
