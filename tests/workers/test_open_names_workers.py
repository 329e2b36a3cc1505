"""Open mode (``--any-token``) under ``arena serve --workers``: a name
belongs to the first token that used it in the whole server, parent and
workers alike. A bot that opted in to playing people is kept by the parent,
a bot that did not goes to a worker; with the same name and another token
the second one is refused, whichever process it reaches."""

from __future__ import annotations

from typing import Any

import pytest

from arena.storage import open_store
from tests.server.rawbot import RawBot
from tests.workers.served import until


def _holder(db: str) -> str | None:
    store = open_store(db)
    try:
        with store.db.read() as conn:
            row = conn.execute("SELECT token_hash FROM open_names WHERE name = 'twin'").fetchone()
        return None if row is None else str(row[0])
    finally:
        store.close()


async def _hello(port: int, token: str, people: bool) -> tuple[RawBot, dict[str, Any] | None]:
    bot = await RawBot().connect(port)
    message: dict[str, Any] = {"type": "hello", "protocol": 1, "token": token, "name": "twin"}
    if people:
        message["people"] = True
    await bot.send(message)
    return bot, await bot.recv(timeout=30)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("first_people", [True, False])
async def test_a_name_taken_in_one_process_is_refused_in_another(served, first_people):
    arena = served("--any-token")
    first, welcome = await _hello(arena.port, "token-one", people=first_people)
    second = None
    try:
        assert welcome is not None and welcome["type"] == "welcome", welcome
        # The claim is stored off the hello's path: wait until it is (two
        # hellos at the same instant are decided by the store, below).
        await until(lambda: _holder(arena.db) is not None, 30, "the name's claim stored")
        second, answer = await _hello(arena.port, "token-two", people=not first_people)
        assert answer is not None and answer["type"] == "error", answer
        assert answer["code"] == "auth_failed" and "twin" in answer["message"], answer
        # The owner keeps its name: it says hello again and is let in.
        again, welcome = await _hello(arena.port, "token-one", people=first_people)
        assert welcome is not None and welcome["type"] == "welcome", welcome
        await again.close()
    finally:
        await first.close()
        if second is not None:
            await second.close()
    assert arena.stop() == 0


async def _messages_until_closed(bot: RawBot, quiet_s: float) -> tuple[list[dict[str, Any]], bool]:
    """What the server sent, and whether it closed the connection (else it
    stayed open and quiet for ``quiet_s``)."""
    seen: list[dict[str, Any]] = []
    while True:
        try:
            message = await bot.recv(timeout=quiet_s)
        except TimeoutError:
            return seen, False
        if message is None:
            return seen, True
        seen.append(message)


@pytest.mark.timeout(120)
async def test_two_tokens_racing_for_a_name_in_two_processes_leave_one_bot(served):
    arena = served("--any-token")
    bots = [await RawBot().connect(arena.port) for _ in range(2)]
    try:
        # At the same instant: one to the parent (people), one to a worker.
        for token, people, bot in (("token-one", True, bots[0]), ("token-two", False, bots[1])):
            message: dict[str, Any] = {"type": "hello", "protocol": 1, "token": token,
                                       "name": "twin"}
            if people:
                message["people"] = True
            await bot.send(message)
        ends = [await _messages_until_closed(bot, quiet_s=8) for bot in bots]
        open_ = [not closed for _, closed in ends]
        assert open_.count(True) == 1, ends
        loser = ends[open_.index(False)][0]
        assert any(m["type"] == "error" and m["code"] == "auth_failed" for m in loser), loser
        winner = ends[open_.index(True)][0]
        assert [m["type"] for m in winner] == ["welcome"], winner
    finally:
        for bot in bots:
            await bot.close()
    assert arena.stop() == 0
