"""People and bots share one namespace in every registration mode: a bot
never takes a person's name (HTTP registration, ``arena bots add``, a
hello on a server with ``--any-token``), and a person never takes a bot's.
On both stores."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import aiohttp
import pytest

from arena.cli import main
from arena.storage import open_store
from tests.people.helpers import people_site
from tests.server.rawbot import RawBot


async def _person_status(http: aiohttp.ClientSession, base: str, name: str) -> int:
    async with http.post(f"{base}/api/people", json={"name": name}) as r:
        return r.status


async def test_http_registration_refuses_a_persons_name(tmp_path: Path, db_location: str) -> None:
    async with people_site(tmp_path, db_location) as site:
        store, base, http = site.store, site.base, site.http
        await site.person("alice")
        async with http.post(f"{base}/api/bots", json={"name": "alice"}) as r:
            assert r.status == 409, await r.text()
        assert store.get_bot("alice").kind == "person"  # type: ignore[union-attr]


async def test_a_person_cannot_take_a_registered_bots_name(tmp_path: Path,
                                                           db_location: str) -> None:
    async with people_site(tmp_path, db_location) as site:
        store, base, http = site.store, site.base, site.http
        async with http.post(f"{base}/api/bots", json={"name": "robo"}) as r:
            assert r.status == 201, await r.text()
        assert await _person_status(http, base, "robo") == 409
        assert store.get_bot("robo").kind == "remote"  # type: ignore[union-attr]


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
    async with people_site(tmp_path, db_location, open=True) as site:
        arena, store = site.arena, site.store
        await site.person("alice")
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


async def test_a_person_cannot_take_the_name_of_a_bot_on_an_open_server(
        tmp_path: Path, db_location: str) -> None:
    with contextlib.closing(open_store(db_location)) as store:
        async with people_site(tmp_path, db_location, store=store, open=True) as site:
            bot = await RawBot().connect(site.arena.port)
            welcome = await bot.hello(token="bobs-token", name="bob")
            assert welcome is not None and welcome["type"] == "welcome", welcome
            assert await _person_status(site.http, site.base, "bob") == 409
            # The same bot comes back with its token after a restart of the
            # server: its name is still its own, still no person's.
        async with people_site(tmp_path, db_location, store=store, open=True) as site:
            assert await _person_status(site.http, site.base, "bob") == 409
            again = await RawBot().connect(site.arena.port)
            welcome = await again.hello(token="bobs-token", name="bob")
            assert welcome is not None and welcome["type"] == "welcome", welcome


async def test_a_person_who_takes_the_name_during_the_hello_wins(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The hello's check reads the store before the person's row is there
    (the person registers between the check and the bot's write): the
    store's key decides, and the bot is told and let go."""
    async with people_site(tmp_path, open=True) as site:
        arena, store = site.arena, site.store
        await site.person("alice")
        real_get_bot = store.get_bot
        monkeypatch.setattr(store, "get_bot",
                            lambda name: None if name == "alice" else real_get_bot(name))
        bot = await RawBot().connect(arena.port)
        welcome = await bot.hello(token="early-token", name="alice")
        assert welcome is not None and welcome["type"] == "welcome", welcome
        closing = await bot.recv()
        assert closing is not None and closing["type"] == "error", closing
        assert closing["code"] == "auth_failed" and "person" in closing["message"]
        assert await bot.recv() is None
        monkeypatch.undo()
        assert store.get_bot("alice").kind == "person"  # type: ignore[union-attr]
        # The name is free of the bot's token again: the same hello is refused outright.
        again = await RawBot().connect(arena.port)
        answer = await again.hello(token="early-token", name="alice")
        assert answer is not None and answer["code"] == "auth_failed", answer


async def test_a_new_name_waits_while_the_store_takes_no_writes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A name that cannot be recorded could be a person's later: the bot is
    asked to come back (``rate_limited``), and does so once the store
    writes again."""
    from arena.storage.base import StorageError
    async with people_site(tmp_path, open=True) as site:
        arena, store, base, http = site.arena, site.store, site.base, site.http
        def full(name: str, **_: object) -> None:
            raise StorageError("database or disk is full")
        monkeypatch.setattr(store, "ensure_bot", full)
        bot = await RawBot().connect(arena.port)
        await bot.hello(token="patient", name="bolt")
        closing = await bot.recv()
        assert closing is not None and closing["code"] == "rate_limited", closing
        assert closing.get("retry_after_s") == 5
        assert await bot.recv() is None
        assert store.get_bot("bolt") is None
        monkeypatch.undo()
        back = await RawBot().connect(arena.port)
        welcome = await back.hello(token="patient", name="bolt")
        assert welcome is not None and welcome["type"] == "welcome", welcome
        async with asyncio.timeout(30):
            while store.get_bot("bolt") is None:
                await asyncio.sleep(0.02)
        assert await _person_status(http, base, "bolt") == 409
