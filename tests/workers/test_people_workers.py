"""A person plays under ``arena serve --workers 2``: people's tables run in
the parent, which serves the web; bots whose hello opted in to playing
people are kept there too, so a person can pick them, and the match is
stored like any other."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import aiohttp
import pytest

from arena.people import PEOPLE
from arena.storage import open_store
from arena.storage.base import MatchStatus
from tests.people.helpers import play_as_person, random_legal, register

from .served import ARGS, Served, random_strategy
from protocol.sdk.client import BotClient

# Open registration for the person; nobody is matched with house bots
# while the opted-in bots wait for the person.
SERVE = (*ARGS[:1], "--house-wait", "600", *ARGS[3:], "--registration", "open")


@pytest.mark.timeout(240)
async def test_a_person_plays_opted_in_bots_under_workers(tmp_path: Path) -> None:
    served = Served(tmp_path / "arena.db", *SERVE)
    clients: list[BotClient] = []
    tasks: list[asyncio.Task[None]] = []
    try:
        for i, (name, people) in enumerate([("p-1", True), ("p-2", True), ("p-3", True),
                                            ("p-4", True), ("shy", False)]):
            client = BotClient("127.0.0.1", served.port, f"tok-{name}", name,
                               random_strategy(i), threaded=False, people=people)
            clients.append(client)
            tasks.append(asyncio.create_task(client.run()))
        base = f"http://127.0.0.1:{served.http_port}"
        async with aiohttp.ClientSession() as http:
            async with asyncio.timeout(60):
                while True:
                    async with http.get(f"{base}/api/play/muushig/choices") as r:
                        waiting = {b["bot"] for b in (await r.json())["lobby"]}
                    if waiting >= {"p-1", "p-2", "p-3", "p-4"}:
                        break
                    await asyncio.sleep(0.1)
            assert "shy" not in waiting
            token = await register(http, base, "altan")
            table, seen = await play_as_person(http, base, token, "muushig",
                                               random_legal(random.Random(4)))
            assert sorted(p for p in table["players"] if p != "altan") == \
                ["p-1", "p-2", "p-3", "p-4"]
            assert seen[-1]["type"] == "match_end"
        store = open_store(served.db)
        try:
            async with asyncio.timeout(30):
                while store.get_match(table["match"]).status is not MatchStatus.FINISHED:
                    await asyncio.sleep(0.1)
            record = store.get_match(table["match"])
            assert record.tournament_id == PEOPLE and "altan" in record.players
        finally:
            store.close()
    finally:
        for client in clients:
            await client.stop()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        served.stop()
