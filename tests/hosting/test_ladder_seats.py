"""A hosted bot sits at one table of the whole store at a time.

Every node of a store runs its own ladder. The ladders here are real
(:class:`arena.hosting.ladder.Ladder`) on real stores, two nodes on one
SQLite file or one PostgreSQL database; what is fake is the arena around
them: a server whose matches last until the test ends them, and hosted bots
that are only names (no sandbox), so a match can be held open while the
other node's ladder ticks.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, AsyncIterator, Callable, Iterator

import pytest
from structlog.testing import capture_logs

from arena.hosting.ladder import Ladder, LadderSettings
from arena.hosting.seats import SeatSettings
from arena.hosting.versions import BuildStatus, VersionStore
from arena.storage import open_store
from arena.storage.base import Store
from tests.storage.conftest import db_location  # noqa: F401 - fixtures

WAIT_S = 30.0  # bounded waits, generous for a loaded machine


class Reads:
    """``server.writer``: the store's reads, run inline."""

    async def read(self, fn: Callable[[], Any]) -> Any:
        return fn()


@dataclass
class Table:
    players: list[str]
    tournament_id: str | None
    done: asyncio.Event = field(default_factory=asyncio.Event)


class FakeServer:
    """The parts of an ArenaServer a ladder uses; each match waits for
    ``end()``. ``remote`` are remote bots that opted in to this node."""

    def __init__(self, store: Store, remote: list[str] | None = None) -> None:
        self.store = store
        self.writer = Reads()
        self.remote = remote or []
        self.tables: list[Table] = []
        self.n = 0

    def ladder_bots(self) -> list[tuple[str, str]]:
        return [(name, "muushig") for name in self.remote]

    def seats_for(self, _tournament: Any, _game: str) -> int:
        return 5

    def spec_of(self, _game: str) -> Any:
        return SimpleNamespace(default_house_bot="random")

    async def play_match(self, players: list[Any], *, game: str, claim_timeout_s: float,
                         tournament_id: str | None = None) -> Any:
        table = Table([p.name for p in players if p.house is None], tournament_id)
        self.tables.append(table)
        await table.done.wait()
        self.n += 1
        return SimpleNamespace(match_id=f"{self.store.node}-m{self.n}", aborted=None)

    def seated(self, bot: str) -> list[Table]:
        return [t for t in self.tables if bot in t.players]

    def end(self) -> None:
        for table in self.tables:
            table.done.set()


class NamesOnly:
    """Hosted bots as names: the ladder's ``hosted`` without sandboxes."""

    def __init__(self, versions: VersionStore) -> None:
        self.versions = versions
        self.running: set[str] = set()

    def ready_bots(self) -> list[Any]:
        return self.versions.ready_bots()

    def seated_here(self) -> set[str]:
        return set()

    async def start(self, bot: str, version_number: int | None = None) -> None:
        self.running.add(bot)

    async def stop(self, bot: str, match_id: str | None = None) -> None:
        self.running.discard(bot)


@dataclass
class Node:
    store: Store
    versions: VersionStore
    server: FakeServer
    ladder: Ladder

    async def tick(self) -> asyncio.Task[Any] | None:
        """One ladder tick as ``Ladder.run`` does it."""
        snapshot = await self.ladder.read_snapshot()
        if self.ladder.validate_one(snapshot) is None:
            return self.ladder.start_one(snapshot)
        return None


def ready(versions: VersionStore, bot: str, *, validated: bool = True) -> None:
    version = versions.new_version(bot, "bot.py", "python", b"print()")
    version.status = BuildStatus.READY
    if validated:
        version.validation = {"passed": True, "match_id": "v-1"}
    versions.save(version)


@pytest.fixture
def two_nodes(db_location: str, tmp_path: Any) -> Iterator[Callable[..., tuple[Node, Node]]]:
    opened: list[Store] = []

    def make(*, remote: list[str] | None = None, **settings: Any) -> tuple[Node, Node]:
        nodes = []
        for name in ("node-a", "node-b"):
            store = open_store(db_location, node=name)
            opened.append(store)
            versions = VersionStore(store, tmp_path / name)
            server = FakeServer(store, remote if name == "node-a" else None)
            ladder = Ladder(server, NamesOnly(versions),  # type: ignore[arg-type]
                            settings=LadderSettings(**settings), rng=random.Random(1))
            nodes.append(Node(store, versions, server, ladder))
        return nodes[0], nodes[1]

    yield make
    for store in opened:
        store.close()


async def until(condition: Callable[[], bool]) -> None:
    async with asyncio.timeout(WAIT_S):
        while not condition():
            await asyncio.sleep(0.02)


async def finish(*nodes: Node) -> None:
    for node in nodes:
        node.server.end()
    for node in nodes:
        tasks = list(node.ladder._tasks)
        if tasks:
            await asyncio.wait(tasks, timeout=WAIT_S)


async def test_a_hosted_bot_playing_on_one_node_is_not_seated_on_the_other(two_nodes) -> None:
    a, b = two_nodes()
    ready(a.versions, "solo")
    assert await a.tick() is not None
    await until(lambda: bool(a.server.seated("solo")))  # A's match with it is under way
    task = await b.tick()
    await until(lambda: task is None or task.done() or bool(b.server.tables))
    assert b.server.seated("solo") == [] and "solo" not in b.ladder.hosted.running
    await finish(a, b)


async def test_two_nodes_that_chose_the_same_bot_at_once_seat_it_once(two_nodes) -> None:
    a, b = two_nodes()
    ready(a.versions, "solo")
    # Both ladders read the store before either seated it: the seat decides.
    snapshots = [await a.ladder.read_snapshot(), await b.ladder.read_snapshot()]
    started = [a.ladder.start_one(snapshots[0]), b.ladder.start_one(snapshots[1])]
    assert all(started)
    # Each table either reached its match or ended unplayed.
    await until(lambda: all(task.done() or node.server.tables
                            for task, node in zip(started, (a, b))))
    assert len(a.server.seated("solo")) + len(b.server.seated("solo")) == 1
    await finish(a, b)
    assert [t.result() for t in started].count(None) == 1  # the other table was not played


async def test_the_seat_is_given_back_when_the_match_ends(two_nodes) -> None:
    a, b = two_nodes()
    ready(a.versions, "solo")
    await a.tick()
    await until(lambda: bool(a.server.seated("solo")))
    await finish(a)
    assert b.versions.seated_elsewhere() == set()
    await b.tick()
    await until(lambda: bool(b.server.seated("solo")))
    await finish(b)


async def test_the_seat_of_a_node_that_died_is_taken_once_its_lease_ran_out(two_nodes) -> None:
    a, b = two_nodes()
    ready(a.versions, "solo")
    assert a.versions.claim_seat("solo", 600)  # A seats it, then dies without giving it back
    await b.tick()
    assert b.ladder.playing == set() and b.server.tables == []
    # The lease ran out on the database's clock (A renewed it into the past).
    assert a.versions.claim_seat("solo", -1)
    await b.tick()
    await until(lambda: bool(b.server.seated("solo")))
    await finish(b)


async def test_the_seat_is_renewed_while_the_match_plays(two_nodes) -> None:
    # A lease short enough to see renewed soon (every second), long enough
    # that a renewal slowed by a loaded machine does not give the seat up
    # (with 0.6 s one run in four did, on PostgreSQL).
    a, b = two_nodes(seats=SeatSettings(lease_s=3.0, give_up_s=2.5))
    ready(a.versions, "solo")

    def seat() -> tuple[str, float] | None:
        with a.store.db.read() as db:  # type: ignore[attr-defined]
            row = db.execute("SELECT node, until FROM hosted_seats WHERE bot = ?",
                             ("solo",)).fetchone()
        return None if row is None else (row[0], float(row[1]))

    await a.tick()
    await until(lambda: seat() is not None)
    first = seat()
    assert first is not None and first[0] == "node-a"
    await until(lambda: (seat() or first)[1] > first[1])  # renewed, still node-a's
    assert (seat() or first)[0] == "node-a"
    await finish(a)
    assert seat() is None


async def test_remote_bots_of_a_nodes_lobby_take_no_seat(two_nodes) -> None:
    a, _ = two_nodes(remote=["remote-fan"])
    await a.tick()
    await until(lambda: bool(a.server.seated("remote-fan")))
    assert a.versions.table.hosted_seats_elsewhere("node-b") == set()
    await finish(a)


async def test_a_bot_playing_on_another_node_waits_for_its_validation_match(two_nodes) -> None:
    a, b = two_nodes()
    ready(a.versions, "solo")
    await a.tick()
    await until(lambda: bool(a.server.seated("solo")))
    ready(a.versions, "solo", validated=False)  # its v2 waits for a validation match
    assert b.ladder.validate_one(await b.ladder.read_snapshot()) is None
    assert b.versions.get("solo", 2).validation is None
    await finish(a)


async def test_validation_played_elsewhere_is_logged_once_per_version(two_nodes) -> None:
    a, b = two_nodes()
    ready(a.versions, "solo", validated=False)
    assert a.versions.claim_validation(a.versions.get("solo", 1))  # A plays it (for long)
    with capture_logs() as logs:
        for _ in range(5):
            task = b.ladder.validate_one(await b.ladder.read_snapshot())
            if task is not None:
                await task
    noted = [e for e in logs if e["event"] == "validation_not_played"]
    loud = [e for e in noted if e["log_level"] not in ("debug",)]
    assert len(loud) == 1, noted
    assert loud[0]["bot"] == "solo" and loud[0]["version"] == 1


async def test_a_store_that_fails_to_seat_a_bot_leaves_the_table_unplayed(
        two_nodes, monkeypatch: pytest.MonkeyPatch) -> None:
    from arena.storage.base import StorageError

    a, _ = two_nodes()
    ready(a.versions, "solo")

    def away(bot: str, lease_s: float) -> bool:
        raise StorageError("the database is away")

    monkeypatch.setattr(a.versions, "claim_seat", away)
    task = await a.tick()
    assert task is not None
    assert await asyncio.wait_for(task, WAIT_S) is None
    assert a.server.tables == [] and a.ladder.hosted.running == set()  # nothing started
    assert a.ladder.playing == set()  # the next tick may choose it again
