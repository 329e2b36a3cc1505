"""The challenge service's choices, stepped tick by tick against a fake
server: who is free, how many tables it may take, what a restart replays."""

from __future__ import annotations

import asyncio
import time

import pytest

from arena.server.matches import MatchOutcome
from arena.storage.base import MatchRecord, MatchStatus, TournamentStatus
from arena.storage.sqlite import SqliteStore
from arena.storage.writer import StoreWriter
from arena.tournament.challenge import ChallengeLimits, ChallengeRequest
from arena.tournament.challenge_play import ChallengeService
from arena.tournament.challenge_store import create_challenge

LIMITS = ChallengeLimits(table_share=0.25, min_tables=1, max_attempts=2)


class FakeServer:
    """Plays nothing: each match waits for the test to end it."""

    def __init__(self, store: SqliteStore) -> None:
        self.store = store
        self.writer = StoreWriter(store)
        self.stopping = False
        self.idle: set[str] = set()
        self.other_tables = 0
        self.calls: list[tuple[str, int]] = []
        self.results: asyncio.Queue[str | None] = asyncio.Queue()  # None: aborted

    def idle_bots(self) -> list[str]:
        return sorted(self.idle)

    def playing_match_ids(self) -> set[str]:
        return {f"other-{i}" for i in range(self.other_tables)} | \
            {f"ch-{i}" for i in range(len(self.calls) - self.results.qsize())}

    async def play_match(self, players, *, tournament_id, slot, game, claim_timeout_s):
        self.calls.append(slot)
        aborted = await self.results.get()
        match_id = f"m-{len(self.calls)}"
        if aborted is None:
            _stored_match(self.store, match_id, tournament_id, slot[1])
        return MatchOutcome(match_id=match_id, result=None, aborted=aborted, players=[])


def _stored_match(store: SqliteStore, match_id: str, tournament_id: str, slot: int) -> None:
    store.create_match(MatchRecord(id=match_id, game="muushig", players=[], rules={}, limits={},
                                   status=MatchStatus.RUNNING, started_at=time.time(),
                                   tournament_id=tournament_id))
    store.finish_match(match_id, result={}, reveal=[], faults=[], latency_ms=[],
                       finished_at=time.time(), slot=(tournament_id, slot))


def _ask(store: SqliteStore, challenger: str, opponent: str, matches: int) -> str:
    request = ChallengeRequest(challenger=challenger, game="muushig", opponents=(opponent,),
                               matches=matches)
    return create_challenge(store, request, limits=LIMITS, now=time.time(), seats=5,
                            house_bot="heuristic").id


async def _settle(server: "FakeServer", calls: int | None = None) -> None:
    """Let started matches reach play_match (``calls`` of them, waited for
    up to 10 s), the writer's work done."""
    async with asyncio.timeout(10):
        while True:
            await server.writer.flush()
            for _ in range(5):
                await asyncio.sleep(0.01)
            if calls is None or len(server.calls) >= calls:
                return


@pytest.fixture
async def server(tmp_path):
    store = SqliteStore(tmp_path / "arena.db")
    fake = FakeServer(store)
    yield fake
    await fake.writer.close()
    store.close()


async def _service(server: FakeServer) -> ChallengeService:
    service = ChallengeService(LIMITS)
    service.server = server
    return service


async def test_a_match_waits_until_all_its_bots_are_free(server):
    cid = _ask(server.store, "me", "rival", 1)
    service = await _service(server)
    server.idle = {"me"}
    await service.tick()
    assert server.calls == []
    server.idle = {"me", "rival"}
    await service.tick()
    await _settle(server, 1)
    assert server.calls == [(cid, 0)]
    await service.stop()


async def test_challenge_tables_keep_to_their_share(server):
    _ask(server.store, "a", "b", 3)
    _ask(server.store, "c", "d", 3)
    server.idle = {"a", "b", "c", "d"}
    service = await _service(server)
    server.other_tables = 2
    await service.tick()
    await _settle(server, 1)
    assert len(server.calls) == 1  # 1 of 3 tables; a second would be 2 of 4 > 25 %
    server.other_tables = 8
    await service.tick()
    await _settle(server, 2)
    assert len(server.calls) == 2  # 2 of 10
    await service.tick()
    await _settle(server)
    assert len(server.calls) == 2  # a bot plays one challenge match at a time, and 3 of 11
    await service.stop()


async def test_aborted_matches_are_retried_then_given_up_and_the_challenge_ends(server):
    cid = _ask(server.store, "me", "rival", 2)
    server.idle = {"me", "rival"}
    service = await _service(server)
    for n, outcome in enumerate(("crashed", None, "crashed", "crashed"), start=1):
        await service.tick()
        await _settle(server, n)
        await server.results.put(outcome)
        async with asyncio.timeout(10):
            while service._playing:  # the match has ended and its outcome is stored
                await asyncio.sleep(0.01)
        await server.writer.flush()
    assert server.calls == [(cid, 0), (cid, 0), (cid, 1), (cid, 1)]
    await service.tick()
    assert server.store.get_tournament(cid).status is TournamentStatus.FINISHED
    slots = server.store.get_schedule(cid)
    assert slots[0].match_id == "m-2" and slots[1].match_id is None and slots[1].attempts == 2
    await service.stop()


async def test_after_a_restart_only_the_unplayed_matches_are_played(server):
    cid = _ask(server.store, "me", "rival", 3)
    _stored_match(server.store, "played-before", cid, 0)
    server.idle = {"me", "rival"}
    service = await _service(server)  # a fresh service: nothing in memory
    await service.tick()
    await _settle(server, 1)
    assert server.calls == [(cid, 1)]
    await service.stop()


async def test_a_tick_with_no_challenge_to_start_reads_no_running_matches(server, monkeypatch):
    """The other nodes' tables are read (every running match of the store)
    only when a slot may start: a busy server with no open challenge, or
    only finished ones, read them twice a second for nothing."""
    reads: list[MatchStatus | None] = []
    list_matches = server.store.list_matches

    def counted(*args, **kwargs):
        reads.append(kwargs.get("status"))
        return list_matches(*args, **kwargs)

    monkeypatch.setattr(server.store, "list_matches", counted)
    service = await _service(server)
    server.other_tables = 200
    await service.tick()
    assert reads == []
    _ask(server.store, "me", "rival", 1)
    server.idle = {"me", "rival"}
    await service.tick()  # a slot may start: the share is read, once
    await _settle(server, 1)
    assert reads.count(MatchStatus.RUNNING) == 1
