"""A bot that is not connected when its deck set's reveal lifts is sent
what it is owed when it connects again (protocol §6), once, on SQLite and
on PostgreSQL.

A Swiss round of two tables deals one deck set. The first table's bots play
their matches and leave (``max_matches``) before the second table's bots
connect; the second table ends the set while the first pair is away. When
the first pair connects again, each is sent the reveal of every match it
played, and its decks check against the commitments it kept."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest

from protocol.sdk.client import BotClient

from .arenas import arena_nodes, create_and_pair, until_finished

ADMIN = "admin-token-for-reconnects"
CUP = {"name": "away cup", "game": "muushig", "seed": 5, "duplicate": True,
       "limits": {"decision_ms": 1000, "bank_ms": 0},
       "rules": {"players": 2, "max_hands": 2},
       "schedule": {"kind": "swiss", "rounds": 1, "house_bot": "heuristic"},
       "entrant": [{"name": n, "remote": True} for n in ("ann", "bob", "cat", "dan")]}


def _client(port: int, name: str, reveals: list[tuple[str, Any]], **kw: Any) -> BotClient:
    rng = random.Random(name)

    def on_reveal(info: Any, reveal: Any) -> None:
        reveals.append((reveal.match, info.deal_problems))

    return BotClient("127.0.0.1", port, f"token-{name}", name,
                     lambda phase, legal, state: rng.choice(legal), on_reveal=on_reveal,
                     reconnect=False, threaded=False, **kw)


@pytest.mark.timeout(180)
async def test_a_bot_away_when_its_reveal_lifted_gets_it_on_connecting_again(db_location):
    async with arena_nodes(db_location, ("solo",), web=(0,), admin_token=ADMIN) as nodes:
        store, port = nodes.stores[0], nodes.arenas[0].port
        schedule = await create_and_pair(nodes, "away-cup", CUP, ADMIN)
        first, second = sorted({tuple(sorted(s.players)) for s in schedule})
        rotations = sum(1 for s in schedule if tuple(sorted(s.players)) == first)
        reveals: dict[str, list[tuple[str, Any]]] = {n: [] for n in first + second}
        # The first table plays all its matches and leaves: its set is not over.
        away = [_client(port, n, reveals[n], max_matches=rotations) for n in first]
        async with asyncio.timeout(120):
            await asyncio.gather(*(c.run() for c in away))
        assert all(r == [] for r in reveals.values())  # nothing lifted while they played
        # The second table ends the set while the first pair is away.
        later = [_client(port, n, reveals[n]) for n in second]
        tasks = [asyncio.create_task(c.run()) for c in later]
        back: list[BotClient] = []
        try:
            await until_finished(store, "away-cup")
            played = {n: {s.match_id for s in store.get_schedule("away-cup") if n in s.players}
                      for n in reveals}
            # The first pair connects again, keeping the commitments it had.
            for old in away:
                again = _client(port, old.name, reveals[old.name])
                again.deal_checks = old.deal_checks
                back.append(again)
                tasks.append(asyncio.create_task(again.run()))
            async with asyncio.timeout(30):
                while any({m for m, _ in reveals[n]} != played[n] for n in reveals):
                    await asyncio.sleep(0.1)
            await asyncio.sleep(2.5)  # a duplicate would come with the next polls
        finally:
            for client in later + back:
                await client.stop()
            await asyncio.gather(*tasks, return_exceptions=True)
        for name, got in reveals.items():
            assert sorted(m for m, _ in got) == sorted(played[name]), name  # once each
            assert all(problems == [] for _, problems in got), (name, got)
