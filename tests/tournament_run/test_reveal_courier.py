"""Every node sends its own connected bots the deferred reveals they are
owed, once per bot and match (protocol §6), on SQLite and on PostgreSQL.

The courier is stepped by hand against a host that records what it sends:
a node that polls again, a node that restarts, two nodes that hold the same
bot, a bot that was away when its reveal lifted, a bot that leaves between
the claim and the send, a reveal lifted a day ago, and a store that fails."""

from __future__ import annotations

import asyncio

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from arena.storage import open_store
from arena.storage.base import (MatchRecord, MatchStatus, ScheduledMatch, SeatFaults, StorageError,
                                Store, TournamentRecord, TournamentStatus)
from arena.storage.reveal_table import PENDING_REVEAL_S
from arena.tournament.reveals import RevealCourier, lifted_matches, reveal_played_sets
from tests.storage.conftest import db_location  # noqa: F401 - fixtures

REVEAL = [{"round": 0, "hand": 0, "salt": "a3f1", "deck": ["9H", "7H"]}]


class DirectWriter:
    """The store writer's interface, running each call at once."""

    async def call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    async def read(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)


@dataclass
class Host:
    """A node's bots: who is connected, and every message sent to them."""

    store: Store
    connected: set[str] = field(default_factory=set)
    sent: list[tuple[str, str]] = field(default_factory=list)  # (bot, match)
    writer: DirectWriter = field(default_factory=DirectWriter)
    leaves_before_send: set[str] = field(default_factory=set)

    def connected_bots(self) -> set[str]:
        return set(self.connected)

    def send_to_bots(self, names: set[str], message: dict[str, Any]) -> int:
        assert message["type"] == "reveal" and message["reveal"] == REVEAL
        self.connected -= self.leaves_before_send & names
        here = sorted(names & self.connected)
        self.sent.extend((bot, message["match"]) for bot in here)
        return len(here)


def _courier(host: Host) -> RevealCourier:
    return RevealCourier(host)  # type: ignore[arg-type] - the host's part the courier uses


def _played(store: Store, match_id: str, players: list[str]) -> None:
    store.create_match(MatchRecord(id=match_id, game="muushig", players=players, rules={},
                                   limits={}, status=MatchStatus.RUNNING,
                                   started_at=time.time(), tournament_id="cup"))
    store.finish_match(match_id, result={"stars": [0] * len(players)}, reveal=REVEAL,
                       faults=[SeatFaults() for _ in players],
                       latency_ms=[[] for _ in players], finished_at=time.time())


@pytest.fixture
def two_nodes(db_location: str) -> Iterator[tuple[Store, Store]]:  # noqa: F811 - the fixture
    stores = (open_store(db_location, node="node-a"), open_store(db_location, node="node-b"))
    try:
        _played(stores[0], "m1", ["ann", "bob", "house-heuristic-1"])
        _played(stores[0], "m2", ["bob", "ann", "house-heuristic-1"])
        _played(stores[0], "m3", ["cat", "dan"])  # another set, not lifted
        yield stores
    finally:
        for store in stores:
            store.close()


async def test_a_lifted_reveal_goes_to_each_connected_bot_that_played_it_once(two_nodes):
    a, _ = two_nodes
    host = Host(a, {"ann", "bob", "cat"})
    courier = _courier(host)
    assert await courier.deliver() == 0  # nothing lifted yet: nothing is sent
    await courier.lift("cup", ["m1", "m2"])
    await courier.lift("cup", ["m1", "m2"])  # lifted again (a catch-up): no new reveal
    assert await courier.deliver() == 4
    assert sorted(host.sent) == [("ann", "m1"), ("ann", "m2"), ("bob", "m1"), ("bob", "m2")]
    assert await courier.deliver() == 0  # the next poll sends nothing again


async def test_a_restarted_node_sends_nothing_twice(two_nodes, db_location):  # noqa: F811
    a, _ = two_nodes
    host = Host(a, {"ann", "bob"})
    await _courier(host).lift("cup", ["m1"])
    assert await _courier(host).deliver() == 2
    again = open_store(db_location, node="node-c")  # a new process on the same store
    try:
        assert await _courier(Host(again, {"ann", "bob"})).deliver() == 0
    finally:
        again.close()


async def test_a_bot_on_another_node_gets_it_from_that_node(two_nodes):
    a, b = two_nodes
    on_a, on_b = Host(a, {"ann"}), Host(b, {"bob"})
    await _courier(on_a).lift("cup", ["m1"])
    assert await _courier(on_a).deliver() == 1 and on_a.sent == [("ann", "m1")]
    assert await _courier(on_b).deliver() == 1 and on_b.sent == [("bob", "m1")]


async def test_a_bot_connected_to_two_nodes_gets_each_reveal_from_one(two_nodes):
    a, b = two_nodes
    on_a, on_b = Host(a, {"ann", "bob"}), Host(b, {"ann", "bob"})
    await _courier(on_a).lift("cup", ["m1", "m2"])
    await _courier(on_b).deliver()
    await _courier(on_a).deliver()
    assert sorted(on_a.sent + on_b.sent) == [("ann", "m1"), ("ann", "m2"),
                                             ("bob", "m1"), ("bob", "m2")]


async def test_a_bot_that_was_away_gets_what_it_is_owed_when_it_connects(two_nodes):
    a, b = two_nodes
    on_a = Host(a, {"ann"})
    await _courier(on_a).lift("cup", ["m1", "m2"])
    await _courier(on_a).deliver()
    on_b = Host(b)  # bob connects to node B later
    assert await _courier(on_b).deliver() == 0
    on_b.connected.add("bob")
    assert await _courier(on_b).deliver() == 2
    assert sorted(on_b.sent) == [("bob", "m1"), ("bob", "m2")]


async def test_a_bot_that_leaves_before_the_send_is_owed_it_still(two_nodes):
    a, b = two_nodes
    on_a = Host(a, {"ann"}, leaves_before_send={"ann"})
    await _courier(on_a).lift("cup", ["m1"])
    assert await _courier(on_a).deliver() == 0 and on_a.sent == []
    on_b = Host(b, {"ann"})  # it reconnects to node B
    assert await _courier(on_b).deliver() == 1 and on_b.sent == [("ann", "m1")]


async def test_a_round_cancelled_between_its_claim_and_its_send_gives_the_claims_back(
        two_nodes):
    """A runner's reveal poll is cancelled when its tournament ends. Before,
    a round cancelled while it read the messages it had claimed kept the
    claims, and those bots were never sent the reveal by any node (seen
    under load: a duplicate tournament's bots got none of its reveals)."""
    a, _ = two_nodes
    reading = asyncio.Event()

    class HeldWriter(DirectWriter):
        async def read(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
            if getattr(fn, "__name__", "") == "_messages":
                reading.set()
                await asyncio.Event().wait()  # the read is under way until cancelled
            return fn(*args, **kwargs)

    host = Host(a, {"ann", "bob"}, writer=HeldWriter())
    await _courier(host).lift("cup", ["m1"])
    round_ = asyncio.create_task(_courier(host).deliver())
    await reading.wait()
    round_.cancel()
    with pytest.raises(asyncio.CancelledError):
        await round_
    assert host.sent == []
    host.writer = DirectWriter()
    assert await _courier(host).deliver() == 2  # the next round sends them
    assert sorted(host.sent) == [("ann", "m1"), ("bob", "m1")]


async def test_a_reveal_lifted_longer_ago_than_the_window_is_left_to_the_api(two_nodes):
    a, _ = two_nodes
    await _courier(Host(a)).lift("cup", ["m1"])
    with a.db.tx() as db:  # type: ignore[attr-defined] - an SQL store
        db.execute("UPDATE reveals_lifted SET lifted_at = lifted_at - ?",
                   (PENDING_REVEAL_S + 60,))
    assert await _courier(Host(a, {"ann", "bob"})).deliver() == 0
    assert a.pending_reveals(["ann"], within_s=PENDING_REVEAL_S + 3600) == [("m1", "ann")]


async def test_house_bots_and_strangers_are_sent_nothing(two_nodes):
    a, _ = two_nodes
    host = Host(a, {"cat", "house-heuristic-1"})
    await _courier(host).lift("cup", ["m1", "m2"])
    assert await _courier(host).deliver() == 0 and host.sent == []


async def test_a_store_that_fails_sends_nothing_and_loses_nothing(two_nodes):
    a, _ = two_nodes
    await _courier(Host(a)).lift("cup", ["m1"])
    host = Host(a, {"ann"})
    real = a.claim_reveals

    def failing(*args: Any, **kwargs: Any) -> Any:
        raise StorageError("database unreachable")

    a.claim_reveals = failing  # type: ignore[method-assign]
    with pytest.raises(StorageError):
        await _courier(host).deliver()
    a.claim_reveals = real  # type: ignore[method-assign]
    assert host.sent == []
    assert await _courier(host).deliver() == 1 and host.sent == [("ann", "m1")]


def test_only_sealed_matches_of_played_out_deck_sets_are_lifted():
    def slot(i: int, seed: str, match: str | None) -> ScheduledMatch:
        return ScheduledMatch("cup", i, ["ann", "bob"], seed, match)

    schedule = [slot(0, "7:0", "m1"), slot(1, "7:0", "m2"),  # a set played out
                slot(2, "7:1", "m3"), slot(3, "7:1", None),  # a set with a slot to play
                slot(4, "7:2", "m4")]  # a set of one match: never sealed
    assert lifted_matches(schedule) == ["m1", "m2"]


async def test_a_set_whose_lift_was_lost_is_lifted_when_a_runner_stops(two_nodes):
    a, _ = two_nodes
    # The node that finished the set's last match stopped before lifting it.
    a.create_tournament(TournamentRecord(id="cup", name="cup", game="muushig", config={},
                                         status=TournamentStatus.RUNNING,
                                         created_at=time.time()),
                        [ScheduledMatch("cup", 0, ["ann", "bob"], "7:0"),
                         ScheduledMatch("cup", 1, ["bob", "ann"], "7:0")])
    a.complete_slot("cup", 0, "m1")
    a.complete_slot("cup", 1, "m2")
    host = Host(a, {"ann"})
    assert await _courier(host).deliver() == 0
    await reveal_played_sets(host, "cup")  # type: ignore[arg-type] - the host's part it uses
    assert sorted(host.sent) == [("ann", "m1"), ("ann", "m2")]
