"""Removing a bot (or replacing its token) on ``arena serve --workers 2``:
the web is the parent's, the bot's connection is at a worker, and the
worker closes it before the answer reaches the organiser's next step."""

from __future__ import annotations

import json
import urllib.request

import pytest

from arena.auth import hash_token
from arena.server.workers.dispatch import route_key, worker_for_key
from arena.storage import open_store
from tests.server.rawbot import RawBot

from .served import Served


def _token_at(position: int, prefix: str) -> str:
    """A token whose bot the dispatcher hands to the worker at ``position``."""
    for i in range(1000):
        token = f"{prefix}-{i}"
        if worker_for_key(route_key({"token": token}, False), 2) == position:
            return token
    raise AssertionError("no token for that worker")


def _ask(arena: Served, method: str, path: str, token: str) -> int:
    request = urllib.request.Request(f"http://127.0.0.1:{arena.http_port}{path}", method=method,
                                     headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=30) as response:
        json.loads(response.read())
        return response.status


async def _connected(port: int, token: str) -> RawBot:
    bot = await RawBot().connect(port)
    assert (await bot.hello(token, name=None) or {}).get("type") == "welcome"
    return bot


async def _closed_with(bot: RawBot, words: str) -> None:
    said = await bot.until(lambda m: m.get("type") == "error", timeout=30)
    assert said["code"] == "auth_failed" and words in said["message"], said
    assert await bot.recv(timeout=30) is None


@pytest.mark.timeout(180)
async def test_removing_a_bot_closes_its_connections_in_every_worker(tmp_path) -> None:
    db = tmp_path / "arena.db"
    tokens = {f"far-{p}": _token_at(p, f"far{p}") for p in (0, 1)}
    tokens["stays"] = _token_at(0, "stays")
    store = open_store(db)
    for name, token in tokens.items():
        store.add_bot(name, hash_token(token))
    store.close()
    arena = Served(db, "--admin-token", "admin", "--house-wait", "600")
    try:
        bots = {name: await _connected(arena.port, token) for name, token in tokens.items()}
        for name in ("far-0", "far-1"):  # one at each worker
            assert _ask(arena, "DELETE", f"/api/bots/{name}", "admin") == 200
            await _closed_with(bots[name], "removed")
        assert bots["stays"].writer is not None and not bots["stays"].writer.is_closing()
    finally:
        assert arena.stop() == 0


@pytest.mark.timeout(180)
async def test_a_replaced_token_closes_its_connection_at_the_worker(tmp_path) -> None:
    db = tmp_path / "arena.db"
    token = _token_at(1, "rot")
    store = open_store(db)
    store.add_bot("rotated", hash_token(token))
    store.close()
    arena = Served(db, "--admin-token", "admin", "--house-wait", "600")
    try:
        bot = await _connected(arena.port, token)
        assert _ask(arena, "POST", "/api/bots/rotated/token", token) == 200
        await _closed_with(bot, "token")
    finally:
        assert arena.stop() == 0
