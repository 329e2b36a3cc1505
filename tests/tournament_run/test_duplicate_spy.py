"""A bot that keeps everything the arena sends it learns no deal of a later
duplicate rotation before playing it (protocol §6 and thirteen's showdown).

The spy is an ordinary SDK bot. It keeps every message it is sent (match
ends, deferred reveals, showdowns) and, at each match start, reads the API
of every match of its tournament. Each deck and each seat's cards it sees
become known hands. At every deal it is dealt, it checks whether its hand
is one it already knows: in a duplicate tournament the later rotations of
a table replay the earlier decks, so a known hand means the spy knew that
whole deal (every other seat's cards, the face-up card, the stock) before
playing it. It must know none, and still be able to check every commitment
it received once the tournament is over -- on SQLite and on PostgreSQL,
whose store keeps the deal keys in the database rather than beside a file.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from typing import Any

import pytest
from aiohttp import ClientSession
from aiohttp.test_utils import TestServer

from arena.storage import open_store
from arena.storage.base import MatchStatus, Store
from arena.tournament.config import load_config
from arena.tournament.runner import TournamentRunner, create_or_load
from arena.web.app import make_app
from protocol.sdk.client import BotClient
from tests.storage.conftest import db_location  # noqa: F401 - fixtures
from tests.tournament_run.helpers import new_server

CARD = re.compile(r"^[2-9TJQKA][SHDC]$")
ROWS = ("front", "middle", "back")


def _cards(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(
        isinstance(c, str) and CARD.match(c) for c in value)


@dataclass
class Spy:
    """What one spying bot has seen, and what it was dealt."""

    name: str
    http: ClientSession = field(repr=False)
    base: str
    tournament: str
    known: set[frozenset[str]] = field(default_factory=set, repr=False)
    dealt: int = 0
    knew: int = 0
    reveals: int = 0  # deferred reveal messages received

    def learn(self, value: Any) -> None:
        """Every hand any message or page shows: whole decks (each seat's
        share of them), rows of a showdown, the record's ``hands``."""
        if isinstance(value, dict):
            if all(_cards(value.get(row)) for row in ROWS):
                self.known.add(frozenset(c for row in ROWS for c in value[row]))
            hands = value.get("hands")
            if isinstance(hands, list) and hands and all(_cards(h) for h in hands):
                self.known.update(frozenset(h) for h in hands)
            for item in value.values():
                self.learn(item)
        elif isinstance(value, list):
            if _cards(value) and len(value) == 32:  # Muushig: card i to seat i mod 5
                self.known.update(frozenset(value[k:25:5]) for k in range(5))
            elif _cards(value) and len(value) == 52:  # thirteen: card i to seat i mod 4
                self.known.update(frozenset(value[k::4]) for k in range(4))
            else:
                for item in value:
                    self.learn(item)

    async def on_match_start(self, info: Any) -> None:
        # Read every match of the tournament the web shows, as anyone may.
        async with self.http.get(f"{self.base}/api/matches",
                                 params={"tournament": self.tournament, "limit": "200"}) as r:
            page = await r.json()
        self.learn(page)
        for match in page.get("matches", []):
            for path in (f"/api/matches/{match['id']}", f"/api/matches/{match['id']}/events"):
                async with self.http.get(self.base + path) as r:
                    self.learn(await r.json())

    def on_event(self, info: Any, event: dict[str, Any]) -> None:
        if event.get("kind") in ("hand_start", "deal_start") and _cards(event.get("cards")):
            # Its own cards: known in advance if this deal was seen before.
            self.dealt += 1
            if frozenset(event["cards"]) in self.known:
                self.knew += 1
            return
        self.learn(event)

    def on_match_end(self, info: Any, match_end: Any) -> None:
        self.learn(match_end.to_wire())

    def on_reveal(self, info: Any, reveal: Any) -> None:
        self.reveals += 1
        self.learn(reveal.to_wire())


def _strategy(phase: str, legal: Any, state: dict[str, Any]) -> Any:
    if isinstance(legal, dict):  # thirteen: any split of the 13 cards (a foul only costs points)
        cards = list(state["cards"])
        return {"front": cards[:3], "middle": cards[3:8], "back": cards[8:]}
    return legal[0]


def _write(tmp_path, game: str, rules: str) -> Any:
    path = tmp_path / "spy.toml"
    path.write_text(f'name = "spied"\ngame = "{game}"\nseed = 3\nduplicate = true\n'
                    '[limits]\ndecision_ms = 5000\nbank_ms = 0\n'
                    f'[rules]\n{rules}\n'
                    '[[entrant]]\nname = "spy-a"\nremote = true\n'
                    '[[entrant]]\nname = "spy-b"\nremote = true\n')
    return path


async def _spied_tournament(tmp_path, location: str, game: str, rules: str
                            ) -> tuple[list[Spy], list[BotClient], Store, str]:
    store = open_store(location)
    config = load_config(_write(tmp_path, game, rules))
    record, _ = create_or_load(store, config)
    server = new_server(store, open=True)
    await server.start()
    web = TestServer(make_app(store, hub=server.hub, metrics=server.metrics))
    await web.start_server()
    http = ClientSession()
    base = str(web.make_url("")).rstrip("/")
    spies = [Spy(name, http, base, record.id) for name in ("spy-a", "spy-b")]
    clients = []
    for spy in spies:
        client = BotClient("127.0.0.1", server.port, f"token-{spy.name}", spy.name,
                           _strategy,
                           on_match_start=spy.on_match_start, on_event=spy.on_event,
                           on_match_end=spy.on_match_end, on_reveal=spy.on_reveal,
                           threaded=False, reconnect=False, game=game)
        clients.append(client)
    tasks = [asyncio.create_task(c.run()) for c in clients]
    try:
        async with asyncio.timeout(240):
            complete = await TournamentRunner(server, config, record,
                                              claim_timeout_s=30).run()
            assert complete
            await server.writer.flush()
            # The last deferred reveals follow the last match_end: wait for
            # them while the spies are still connected (bounded, polled).
            matches = len(store.get_schedule(record.id))
            for _ in range(200):
                if all(len(c.finished) == matches and not c.deal_checks.awaiting
                       for c in clients):
                    break
                await asyncio.sleep(0.05)
    finally:
        for client in clients:
            await client.stop()
        await asyncio.gather(*tasks, return_exceptions=True)
        await http.close()
        await web.close()
        await server.stop()
    return spies, clients, store, record.id


def _check_no_deal_known(spies: list[Spy], clients: list[BotClient], store: Store,
                         tid: str) -> None:
    schedule = store.get_schedule(tid)
    assert len(schedule) > 1 and all(
        store.get_match(s.match_id).status is MatchStatus.FINISHED for s in schedule)
    for spy in spies:
        assert spy.dealt > 0
        assert spy.knew == 0, f"{spy.name} knew {spy.knew} of {spy.dealt} deals in advance"
    # Everything was revealed in the end: every commitment checks out.
    for client in clients:
        assert len(client.finished) == len(schedule)
        for info in client.finished:
            assert info.deal_problems == [], (info.match, info.deal_problems)
            assert info.commits
    assert all(spy.reveals == len(schedule) for spy in spies)
    # ... and the spy saw every deck at the end (it would have known them all).
    assert all(spy.known for spy in spies)


@pytest.mark.timeout(300)
@pytest.mark.parametrize("game, rules", [("muushig", "max_hands = 12"), ("thirteen", "deals = 4")],
                         ids=["muushig", "thirteen"])
async def test_a_spy_knows_no_deal_of_a_later_rotation(tmp_path, db_location, game, rules):
    spies, clients, store, tid = await _spied_tournament(tmp_path, db_location, game, rules)
    try:
        _check_no_deal_known(spies, clients, store, tid)
    finally:
        store.close()
