"""A hosted bot's seat of the store holds for tournament entrants too, and a
node that cannot keep a seat gives it up before another node may take it.

A tournament's hosted entrant (``mybot.v7``) runs a sandbox of the bot like
a ladder table does; while it plays, no node's ladder may start the bot as
well (two sandboxes of one bot, each with the limits of one). Stores are
real (two nodes on one SQLite file or one PostgreSQL database); the runs
are stand-ins without a sandbox, so a test can hold them open.
"""

from __future__ import annotations

import asyncio
import random
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable, Iterator

import pytest
from structlog.testing import capture_logs

from arena.hosting.errors import SeatTakenError
from arena.hosting.hosted import HostedBots
from arena.hosting.ladder import Ladder, LadderSettings
from arena.hosting.seats import SeatKeeper, SeatSettings
from arena.hosting.versions import VersionStore
from arena.storage import open_store
from arena.storage.base import StorageError, Store
from tests.hosting.test_ladder_seats import FakeServer, Node, NamesOnly, finish, ready, until
from tests.storage.conftest import db_location  # noqa: F401 - fixtures

WAIT_S = 30.0


class Tokens:
    def issue(self, name: str) -> str:
        return f"token-{name}"

    def revoke(self, token: str) -> None:
        pass

    def revoke_bot(self, name: str) -> int:
        return 0


class Sandboxless(HostedBots):
    """The arena's hosted bots, each run a stand-in: no sandbox is started."""

    async def _run(self, version: Any, seat: str) -> Any:  # type: ignore[override]
        async def stop() -> None:
            pass

        path = Path(self.socket_dir) / f"{seat}.log"
        path.write_bytes(b"")
        run = SimpleNamespace(version=version, token=self.tokens.issue(seat), stderr_path=path,
                              socket=SimpleNamespace(close=lambda: None),
                              sandbox=SimpleNamespace(process=None, stop=stop), alive=True)
        self.runs[seat] = run  # type: ignore[assignment]
        return run


@pytest.fixture
def stores(db_location: str, tmp_path: Path) -> Iterator[Callable[[str], VersionStore]]:
    opened: list[Store] = []

    def node(name: str) -> VersionStore:
        store = open_store(db_location, node=name)
        opened.append(store)
        return VersionStore(store, tmp_path / name)

    yield node
    for store in opened:
        store.close()


def hosted(versions: VersionStore, tmp_path: Path, name: str,
           seats: SeatSettings = SeatSettings()) -> Sandboxless:
    folder = tmp_path / f"{name}-runs"
    folder.mkdir()
    return Sandboxless(versions, folder, None, Tokens(), seats=seats)  # type: ignore[arg-type]


def ladder_node(versions: VersionStore, hosted_bots: Any, **settings: Any) -> Node:
    server = FakeServer(versions.store)
    ladder = Ladder(server, hosted_bots, settings=LadderSettings(**settings),  # type: ignore[arg-type]
                    rng=random.Random(1))
    return Node(versions.store, versions, server, ladder)


async def test_a_tournament_entrant_takes_its_bots_seat_of_the_store(stores, tmp_path) -> None:
    a, b = stores("node-a"), stores("node-b")
    ready(a, "solo")
    here = hosted(a, tmp_path, "a")
    await here.start_version("solo", 1, "solo.v1")
    assert b.seated_elsewhere() == {"solo"}
    # Another node's ladder leaves it out while the entrant plays.
    other = ladder_node(b, NamesOnly(b))
    assert await other.tick() is None  # no table: its only bot is seated
    assert other.ladder.hosted.running == set()
    await here.stop("solo.v1", "m-1")
    assert b.seated_elsewhere() == set()  # given back with the run


async def test_this_nodes_ladder_leaves_out_a_bot_its_tournament_plays(stores, tmp_path) -> None:
    a = stores("node-a")
    ready(a, "solo")
    here = hosted(a, tmp_path, "a")
    await here.start_version("solo", 1, "solo.v1")
    node = ladder_node(a, here)
    assert await node.tick() is None  # no table: its only bot is seated
    assert set(here.runs) == {"solo.v1"}
    await here.stop("solo.v1", "m-1")
    await node.tick()
    await until(lambda: bool(node.server.seated("solo")))
    await finish(node)


async def test_two_versions_of_one_bot_hold_one_seat_until_both_stop(stores, tmp_path) -> None:
    a, b = stores("node-a"), stores("node-b")
    ready(a, "solo")
    ready(a, "solo")
    here = hosted(a, tmp_path, "a")
    await here.start_version("solo", 1, "solo.v1")
    await here.start_version("solo", 2, "solo.v2")  # v1 against v2 in one match
    await here.stop("solo.v1", "m-1")
    assert b.seated_elsewhere() == {"solo"}  # v2 still runs
    await here.stop("solo.v2", "m-1")
    assert b.seated_elsewhere() == set()


async def test_an_entrant_waits_for_its_bots_ladder_match_elsewhere(stores, tmp_path) -> None:
    a, b = stores("node-a"), stores("node-b")
    ready(a, "solo")
    assert b.claim_seat("solo", 600)  # node B's ladder plays it
    here = hosted(a, tmp_path, "a")
    here.seat_wait_s = 0.3
    with pytest.raises(SeatTakenError, match="another node"):
        await here.start_version("solo", 1, "solo.v1")
    assert here.runs == {}  # nothing started
    here.seat_wait_s = WAIT_S
    starting = asyncio.ensure_future(here.start_version("solo", 1, "solo.v1"))
    await asyncio.sleep(0.3)
    assert not starting.done()  # still waiting for B's match
    b.release_seat("solo")  # B's match ended
    await asyncio.wait_for(starting, WAIT_S)
    assert a.table.hosted_seats_elsewhere("node-b") == {"solo"}
    await here.stop("solo.v1", None)


def fail_renewals(versions: VersionStore, monkeypatch: pytest.MonkeyPatch) -> None:
    def away(bot: str, lease_s: float) -> bool:
        raise StorageError("the database is away")

    monkeypatch.setattr(versions, "claim_seat", away)


async def test_a_node_that_cannot_renew_stops_the_run_before_the_seat_runs_out(
        stores, monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = stores("node-a"), stores("node-b")
    ready(a, "solo")
    lost: list[tuple[str, bool]] = []

    async def on_lost(bot: str) -> None:
        # Given up while the seat still holds in the store: no other node
        # can have started the bot yet.
        lost.append((bot, b.claim_seat(bot, 3.0)))

    keeper = SeatKeeper(a, lease_s=3.0, on_lost=on_lost)
    await keeper.take("solo", "solo.v1")
    fail_renewals(a, monkeypatch)
    with capture_logs() as logs:
        await until(lambda: bool(lost))
    assert lost == [("solo", False)]
    assert keeper.bots() == set()
    assert any(e["event"] == "hosted_seat_lost" and e["reason"] == "store_unreachable"
               for e in logs)
    await keeper.close()


async def test_a_node_whose_seat_was_taken_stops_the_run(stores) -> None:
    a, b = stores("node-a"), stores("node-b")
    ready(a, "solo")
    lost: list[str] = []

    async def on_lost(bot: str) -> None:
        lost.append(bot)

    keeper = SeatKeeper(a, lease_s=0.6, on_lost=on_lost)
    await keeper.take("solo", "solo.v1")
    a.table.release_hosted_seat("solo", "node-a")  # as if its lease had run out
    assert b.claim_seat("solo", 600)  # and B took it
    await until(lambda: bool(lost))
    assert lost == ["solo"] and keeper.bots() == set()
    await keeper.close()


async def test_a_ladder_match_whose_store_is_away_stops_its_hosted_bot(
        stores, monkeypatch: pytest.MonkeyPatch) -> None:
    a = stores("node-a")
    ready(a, "solo")
    node = ladder_node(a, NamesOnly(a), seats=SeatSettings(lease_s=3.0, give_up_s=2.5))
    await node.tick()
    await until(lambda: bool(node.server.seated("solo")))
    assert node.ladder.hosted.running == {"solo"}
    fail_renewals(a, monkeypatch)
    # Stopped before its lease ran out; the match goes on without it.
    await until(lambda: node.ladder.hosted.running == set())
    await finish(node)


async def test_a_challenge_match_takes_its_hosted_bots_seat(tmp_path) -> None:
    from arena.tournament.challenge_play import ChallengeService
    from tests.tournament.test_challenge_service import LIMITS, FakeServer as ChallengeServer, \
        _ask, _settle

    db = str(tmp_path / "arena.db")
    a_store, b_store = open_store(db, node="node-a"), open_store(db, node="node-b")
    a, b = VersionStore(a_store, tmp_path / "a"), VersionStore(b_store, tmp_path / "b")
    server = ChallengeServer(a_store)  # type: ignore[arg-type]
    ready(a, "solo")
    cid = _ask(a_store, "solo", "rival", 1)  # type: ignore[arg-type]
    here = hosted(a, tmp_path, "a")
    service = ChallengeService(LIMITS, hosted=here)
    service.server = server
    server.idle = {"rival"}
    try:
        assert b.claim_seat("solo", 600)  # another node's ladder plays it
        await service.tick()
        await _settle(server)
        assert server.calls == [] and here.runs == {}  # not started twice
        b.release_seat("solo")
        await service.tick()
        await _settle(server, 1)
        assert server.calls == [(cid, 0)] and b.seated_elsewhere() == {"solo"}
        await server.results.put(None)
    finally:
        await service.stop()
        await server.writer.close()
        a_store.close()
        b_store.close()


async def test_an_entrant_whose_store_is_away_is_stopped_before_its_seat_runs_out(
        stores, tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = stores("node-a"), stores("node-b")
    ready(a, "solo")
    here = hosted(a, tmp_path, "a", SeatSettings(lease_s=3.0, give_up_s=2.5))
    await here.start_version("solo", 1, "solo.v1")
    fail_renewals(a, monkeypatch)

    def away(bot: str) -> None:
        raise StorageError("the database is away")

    monkeypatch.setattr(a, "release_seat", away)
    await until(lambda: here.runs == {})
    assert b.seated_elsewhere() == {"solo"}  # stopped while its seat still held
    await here.stop_all()


async def test_a_seat_given_back_during_a_renewal_stays_given_back(
        stores, monkeypatch: pytest.MonkeyPatch) -> None:
    # Seen under load: the run ended while a renewal's claim was still in
    # its thread; the seat was released first and the late claim wrote it
    # again, so the bot looked seated here for another lease.
    a, b = stores("node-a"), stores("node-b")
    ready(a, "solo")
    keeper = SeatKeeper(a, lease_s=3.0)
    await keeper.take("solo", "solo.v1")
    claim = a.claim_seat
    in_thread = asyncio.Event()
    loop = asyncio.get_running_loop()

    def slow_claim(bot: str, lease_s: float) -> bool:
        loop.call_soon_threadsafe(in_thread.set)
        time.sleep(0.5)  # the store is slow to answer the renewal
        return claim(bot, lease_s)

    monkeypatch.setattr(a, "claim_seat", slow_claim)
    await asyncio.wait_for(in_thread.wait(), WAIT_S)
    await keeper.give_back("solo", "solo.v1")
    await keeper.close()
    assert "solo" not in b.seated_elsewhere()  # nobody holds it: another node may seat it
