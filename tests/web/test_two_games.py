"""The web over a store holding finished matches of both games: a ladder
per game, the game as a filter, and no page or route that breaks."""

from __future__ import annotations

import time

from aiohttp.test_utils import TestClient

from arena.storage.base import (
    MatchRecord,
    MatchStatus,
    SeatFaults,
    TournamentRecord,
    TournamentStatus,
)
from arena.storage.sqlite import SqliteStore
from tests.web import helpers, helpers_thirteen

MUUSHIG_PLAYERS = ["both", "alpha", "beta", "gamma", "delta"]
THIRTEEN_PLAYERS = ["both", "north", "east", "south"]


def store_both_games(store: SqliteStore) -> None:
    """One finished ladder match of each game, with one bot that played both,
    and a thirteen tournament with one finished match."""
    helpers.finish_in_store(store, helpers.make_match("mu1", players=MUUSHIG_PLAYERS),
                            finished_at=time.time() - 10)
    helpers_thirteen.finish_in_store(
        store, helpers_thirteen.play_match("th1", players=THIRTEEN_PLAYERS, deals=2))
    store.create_tournament(TournamentRecord(
        id="poker", name="Poker cup", game="thirteen", config={"game": "thirteen"},
        status=TournamentStatus.FINISHED, created_at=time.time()), [])
    m = helpers_thirteen.play_match("th2", players=["north", "east", "south", "west"],
                                    deals=2, seed=9)
    for name in m.players:
        store.ensure_bot(name)
    store.create_match(MatchRecord(
        id=m.match_id, game="thirteen", players=m.players, rules=m.rules,
        limits={"decision_ms": 1000, "bank_ms": 0}, status=MatchStatus.RUNNING,
        started_at=time.time() - 5, tournament_id="poker"))
    store.finish_match(m.match_id, result=m.result, reveal=m.reveal,
                       faults=[SeatFaults() for _ in m.players],
                       latency_ms=[[4.0]] * 4, finished_at=time.time())


PAGES = ["/", "/matches", "/matches?game=thirteen", "/matches?game=muushig",
         "/matches/mu1", "/matches/th1", "/bots/both", "/bots/both?scope=ladder",
         "/bots/north", "/bots/alpha", "/partials/standings",
         "/partials/standings?scope=ladder&game=thirteen", "/partials/standings?scope=all",
         "/partials/matches", "/partials/live", "/partials/tournaments",
         "/tournaments/poker"]
API = ["/api/standings", "/api/standings?scope=all", "/api/standings?scope=ladder&game=thirteen",
       "/api/standings?scope=all&game=muushig", "/api/matches", "/api/matches?game=thirteen",
       "/api/bots", "/api/bots?game=thirteen", "/api/bots/both", "/api/bots/both?game=thirteen",
       "/api/bots/north?scope=all", "/api/tournaments", "/api/tournaments?game=thirteen",
       "/api/tournaments/poker", "/api/tournaments/poker/standings", "/api/health"]


async def test_every_page_answers_with_both_games_finished(client: TestClient,
                                                           store: SqliteStore) -> None:
    store_both_games(store)
    for path in PAGES + API:
        resp = await client.get(path)
        assert resp.status == 200, (path, resp.status, (await resp.text())[:300])
