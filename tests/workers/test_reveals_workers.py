"""Deferred reveals under ``arena serve --workers``: a bot owed a reveal (a
duplicate tournament played earlier, e.g. by ``arena tournament`` on the
same store) is sent it when it connects again, whichever process its
connection is handed to (protocol §6: within about a second of its
``welcome``, for reveals lifted in the last 24 hours)."""

from __future__ import annotations

import asyncio
import time

import pytest

from arena.storage import open_store
from arena.storage.base import MatchRecord, MatchStatus, SeatFaults
from tests.server.rawbot import RawBot

REVEAL = [{"round": 0, "hand": 0, "salt": "a3f1", "deck": ["9H", "7H"]}]


def _owed(db: str) -> None:
    """Two sealed matches of one deck set, played out and lifted while
    their bots were away."""
    store = open_store(db)
    try:
        for match_id, players in (("m1", ["ann", "bob"]), ("m2", ["bob", "ann"])):
            store.create_match(MatchRecord(id=match_id, game="muushig", players=players,
                                           rules={}, limits={}, status=MatchStatus.RUNNING,
                                           started_at=time.time(), tournament_id="cup"))
            store.finish_match(match_id, result={"stars": [0, 0]}, reveal=REVEAL,
                               faults=[SeatFaults(), SeatFaults()],
                               latency_ms=[[], []], finished_at=time.time())
        store.lift_reveals("cup", ["m1", "m2"])
    finally:
        store.close()


@pytest.mark.timeout(120)
@pytest.mark.parametrize("workers", [1, 2])
async def test_a_bot_owed_reveals_gets_them_from_its_worker(served, tmp_path, workers):
    db = str(tmp_path / "arena.db")
    _owed(db)
    arena = served("--any-token", db=db, workers=workers)
    bot = await RawBot().connect(arena.port)
    try:
        welcome = await bot.hello(token="ann-token", name="ann")
        assert welcome is not None and welcome["type"] == "welcome", welcome
        got: set[str] = set()
        async with asyncio.timeout(30):
            while got != {"m1", "m2"}:
                message = await bot.until(lambda m: m["type"] == "reveal", timeout=30)
                assert message["reveal"] == REVEAL
                got.add(message["match"])
    finally:
        await bot.close()
    assert arena.stop() == 0
