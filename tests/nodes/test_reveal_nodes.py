"""The deferred reveal reaches every bot that played a sealed match, on
whichever node of a shared store it is connected to.

A Swiss round deals one deck set at every table: the two tables of a round
are sealed together, and their reveal lifts when the last of the round's
matches is over. Here each table's bots are connected to a node of their
own, so each node plays its table and one of them finishes the round last:
the bots of the other node must still get a ``reveal`` for every match they
played, whose decks check against the commitments they were sent."""

from __future__ import annotations

import asyncio
import random
from collections import defaultdict
from typing import Any

import pytest

from protocol.sdk.client import BotClient

from .arenas import Bots, arena_nodes, create_and_pair, until_finished

ADMIN = "admin-token-for-reveals"
NAMES = ("ann", "bob", "cat", "dan")
CUP = {"name": "reveal cup", "game": "muushig", "seed": 11, "duplicate": True,
       "limits": {"decision_ms": 1000, "bank_ms": 0},
       "rules": {"players": 2, "max_hands": 2},
       "schedule": {"kind": "swiss", "rounds": 1, "house_bot": "heuristic"},
       "entrant": [{"name": n, "remote": True} for n in NAMES]}


class Keeper:
    """A bot's sealed matches and the reveals it got (checked by the SDK
    against the commitments it kept)."""

    def __init__(self) -> None:
        self.sealed: dict[str, set[str]] = defaultdict(set)
        self.reveals: dict[str, list[tuple[str, list[str] | None, int]]] = defaultdict(list)

    def client(self, port: int, name: str, seed: int) -> BotClient:
        rng = random.Random(seed)

        def on_match_end(info: Any, end: Any) -> None:
            if end.reveal_deferred:
                self.sealed[name].add(info.match)

        def on_reveal(info: Any, reveal: Any) -> None:
            self.reveals[name].append((reveal.match, info.deal_problems, len(reveal.reveal)))

        return BotClient("127.0.0.1", port, f"token-{name}", name,
                         lambda phase, legal, state: rng.choice(legal),
                         on_match_end=on_match_end, on_reveal=on_reveal,
                         reconnect=False, threaded=False)


@pytest.mark.timeout(180)
async def test_every_node_reveals_to_its_own_bots_that_played_the_deck_set(pg_url) -> None:
    async with arena_nodes(pg_url, ("node-a", "node-b"), web=(0,), admin_token=ADMIN) as nodes:
        store = nodes.stores[0]
        schedule = await create_and_pair(nodes, "reveal-cup", CUP, ADMIN)  # the round paired
        tables = sorted({tuple(sorted(s.players)) for s in schedule})
        assert len(tables) == 2 and len({s.seed for s in schedule}) == 1  # one deck set
        keeper = Keeper()
        # Each table's bots on a node of their own: each node plays one table.
        bots = Bots.start([keeper.client(nodes.arenas[i].port, name, seed)
                           for i, table in enumerate(tables)
                           for seed, name in enumerate(table)])
        try:
            await until_finished(store, "reveal-cup")
            played = {s.match_id: s.players for s in store.get_schedule("reveal-cup")}
            expected = {name: {m for m, players in played.items() if name in players}
                        for name in NAMES}
            async with asyncio.timeout(30):  # every bot is sent the reveal of every match it played
                while {n: {r[0] for r in keeper.reveals[n]} for n in NAMES} != expected:
                    await asyncio.sleep(0.1)
                await asyncio.sleep(2)  # a duplicate would come with the next polls
        finally:
            await bots.stop()
        nodes_played = {m.node for m in store.finished_matches(tournament_id="reveal-cup")}
        assert nodes_played == {"node-a", "node-b"}
        for name in NAMES:
            assert keeper.sealed[name] == expected[name]  # each was sealed
            got = keeper.reveals[name]
            assert sorted(r[0] for r in got) == sorted(expected[name])  # once each
            for match, problems, decks in got:
                assert decks > 0 and problems == [], (name, match, problems)
