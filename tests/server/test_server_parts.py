"""The server's parts, each with one job, each usable without the others:

* the gate (``BotGate``) lets connections in, as which bot, for which game;
* the seating (``Seating``) gives a new table its seats and house bots;
* the table runner (``TableRunner``) runs tables and forgets them at their end.

``ArenaServer`` composes them and the lobby; its own tests play through
real sockets (``test_session_table.py``, ``test_table_start_failures.py``).
"""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass
from typing import Any

import pytest

from arena.auth import hash_token
from arena.games.base import RuleConfigError
from arena.metrics import Metrics
from arena.server.config import ServerConfig
from arena.server.connection import AuthError, HelloRefused, Identity
from arena.server.gate import BotGate
from arena.server.lobby import ClaimTimeoutError, Lobby
from arena.server.matches import PlayerSpec
from arena.server.seating import Seating
from arena.server.seats import AutopilotReason, SeatKind
from arena.server.tables import TableRunner
from arena.live import LiveHub
from arena.storage.deal_keys import DealKeyring
from arena.storage.sqlite import SqliteStore
from arena.storage.writer import StoreWriter
from protocol.errors import ErrorCode
from protocol.messages import Hello

_ids = itertools.count(1)


@dataclass(eq=False)
class Conn:
    """What the gate and the seating read of a connection."""

    address: str = "198.51.100.7"
    id: int = 0
    identity: Identity | None = None
    admitted: bool = False
    counted_address: str | None = None
    counted_token: str | None = None
    lingering: bool = False
    closed: bool = False
    seated: Any = None
    awaiting_life: bool = False

    def __post_init__(self) -> None:
        self.id = next(_ids)

    @property
    def bot(self) -> str | None:
        return None if self.identity is None else self.identity.bot


def config(**overrides: Any) -> ServerConfig:
    values: dict[str, Any] = dict(port=0, http_port=None, db=":memory:", open=False)
    values.update(overrides)
    return ServerConfig(**values)


def hello(token: str, name: str = "", game: str | None = None) -> Hello:
    return Hello(protocol=1, token=token, name=name or None, game=game)


@pytest.fixture
def store() -> Any:
    store = SqliteStore(":memory:")
    yield store
    store.close()


# -- the gate ----------------------------------------------------------------------
def test_the_gate_counts_connections_in_and_out_against_its_cap(store):
    gate = BotGate(config(max_connections=2), store, default_game="muushig", metrics=Metrics())
    first, second, third = Conn(), Conn(address="203.0.113.1"), Conn(address="203.0.113.2")
    assert gate.admit(first, stopping=False) is None
    assert gate.admit(second, stopping=False) is None
    refusal = gate.admit(third, stopping=False)
    assert refusal is not None and refusal.code is ErrorCode.RATE_LIMITED
    gate.closed(first)
    assert gate.admit(third, stopping=False) is None
    assert gate.connections == {second, third}


def test_the_gate_lets_nobody_in_while_the_server_stops(store):
    gate = BotGate(config(), store, default_game="muushig", metrics=Metrics())
    refusal = gate.admit(Conn(), stopping=True)
    assert refusal is not None and "shutting down" in refusal.message
    assert not gate.connections


def test_a_registered_token_speaks_for_its_bot_and_its_game_is_remembered(store):
    store.add_bot("alice", hash_token("t-alice"))
    gate = BotGate(config(), store, default_game="muushig", metrics=Metrics())
    conn = Conn()
    gate.admit(conn, stopping=False)
    identity = gate.authenticate(hello("t-alice", game="thirteen"), conn)
    assert identity == Identity(bot="alice", token_hash=hash_token("t-alice"))
    assert gate.game_of(conn) == "thirteen"
    gate.closed(conn)
    assert gate.game_of(conn) == "muushig"  # forgotten with the connection


def test_unknown_tokens_fail_and_too_many_failures_are_refused_before_the_store(store):
    gate = BotGate(config(auth_failures_per_minute=2), store, default_game="muushig",
                   metrics=Metrics())
    conn = Conn()
    gate.admit(conn, stopping=False)
    for _ in range(2):
        with pytest.raises(AuthError, match="arena bots add"):
            gate.authenticate(hello("guess"), conn)
    with pytest.raises(HelloRefused) as refused:
        gate.authenticate(hello("guess"), conn)
    assert refused.value.refusal.code is ErrorCode.RATE_LIMITED


def test_the_arenas_own_bots_do_not_count_against_their_address(store):
    gate = BotGate(config(max_connections_per_address=1), store, default_game="muushig",
                   metrics=Metrics())
    token = gate.local_tokens.issue("house-made")
    first = Conn(address="127.0.0.1")
    assert gate.admit(first, stopping=False) is None
    gate.authenticate(hello(token), first)
    assert gate.admit(Conn(address="127.0.0.1"), stopping=False) is None


def test_a_hello_for_a_game_the_server_does_not_play_is_malformed(store):
    gate = BotGate(config(), store, default_game="muushig", metrics=Metrics())
    with pytest.raises(HelloRefused) as refused:
        gate.authenticate(hello("t", game="chess"), Conn())
    assert refused.value.refusal.code is ErrorCode.MALFORMED


# -- the seating ---------------------------------------------------------------------
def test_bad_rules_fail_when_the_seating_is_made():
    with pytest.raises(RuleConfigError):
        Seating(config(rules={"max_hands": -3}))


def test_a_lobby_table_seats_its_bots_and_fills_the_rest_with_house_bots():
    seating = Seating(config())
    spec = seating.spec_of(None)
    conns = [Conn(identity=Identity(bot=f"b{i}", token_hash=f"h{i}")) for i in range(2)]
    seats = seating.lobby_seats(conns, spec.n_seats - 2, spec)
    assert [seat.index for seat in seats] == list(range(spec.n_seats))
    remote = [seat for seat in seats if seat.kind is SeatKind.REMOTE]
    assert sorted(seat.name for seat in remote) == ["b0", "b1"]
    assert all(seat.conn in conns and seat.token_hash for seat in remote)
    house = sorted(seat.name for seat in seats if seat.kind is SeatKind.HOUSE)
    kind = seating.house_kind(spec)
    assert house == [f"house-{kind}-{n}" for n in range(1, spec.n_seats - 1)]
    assert all(callable(seat.house) for seat in seats)  # autopilot for every seat


async def test_a_directed_match_claims_its_bots_and_stands_in_for_the_absent():
    seating = Seating(config())
    spec = seating.spec_of("thirteen")
    lobby = Lobby(seats=spec.n_seats, matchmaking=False, house_wait_s=None,
                  start_table=lambda conns, house: None, game_of=lambda conn: "thirteen")
    here = Conn(identity=Identity(bot="here", token_hash="h-here"))
    lobby.add(here)  # type: ignore[arg-type]
    players = [PlayerSpec("here"), PlayerSpec("away", stand_in=True, token_hash="h-away"),
               *[PlayerSpec(f"house{i}", house="random") for i in range(spec.n_seats - 2)]]
    claimed: list[Any] = []
    seats, absent = await seating.claim_seats(lobby, players, spec, None, 0.05, claimed)
    assert claimed == [here] and absent == ["away"]
    assert [seat.name for seat in seats] == [p.name for p in players]
    assert seats[1].autopilot is AutopilotReason.DISCONNECTED and seats[1].token_hash == "h-away"
    with pytest.raises(ClaimTimeoutError):
        await seating.claim_seats(lobby, [PlayerSpec("away"), *players[1:]], spec, None, 0.05,
                                  [])


# -- the table runner -------------------------------------------------------------------
class FakeTable:
    def __init__(self, match_id: str, outcome: Any) -> None:
        self.match_id = match_id
        self.outcome = outcome
        self.started = asyncio.Event()
        self.tournament_id: str | None = None
        self.slot: tuple[str, int] | None = None
        self.cancel_reason: str | None = None

    def mark_cancelled(self, reason: str) -> None:
        self.cancel_reason = self.cancel_reason or reason

    async def run(self) -> Any:
        self.started.set()
        if isinstance(self.outcome, BaseException):
            raise self.outcome
        if self.outcome == "forever":
            await asyncio.Event().wait()
        return self.outcome


def runner(store: Any) -> TableRunner:
    return TableRunner(config(), store, writer=StoreWriter(store), hub=LiveHub(),
                       metrics=Metrics(), on_seat_released=lambda conn: None)


async def test_the_runner_forgets_a_table_when_it_ends_however_it_ends(store):
    tables = runner(store)
    for outcome in ({"ranks": [1]}, RuntimeError("crashed")):
        table = FakeTable(f"m-{outcome!r:.8}", outcome)
        tables.tables[table.match_id] = table  # type: ignore[assignment]
        await tables.launch(table)  # type: ignore[arg-type]
        assert table.match_id not in tables.tables


async def test_the_runner_cancels_every_running_table_at_shutdown(store):
    tables = runner(store)
    running = [FakeTable(f"m{i}", "forever") for i in range(3)]
    for table in running:
        tables.tables[table.match_id] = table  # type: ignore[assignment]
        tables.launch(table)  # type: ignore[arg-type]
    async with asyncio.timeout(10):
        for table in running:
            await table.started.wait()
    pending = tables.cancel()
    assert len(pending) == 3
    async with asyncio.timeout(10):
        await asyncio.wait(pending)
    assert all(task.cancelled() for task in pending) and tables.tables == {}
    assert {table.cancel_reason for table in running} == {"server shutting down"}


async def test_a_runner_table_deals_from_a_fresh_key_that_is_stored_first(store):
    tables = runner(store)
    seating = Seating(config())
    spec = seating.spec_of(None)
    seats = seating.lobby_seats([], spec.n_seats, spec)
    table = tables.new_table(seats, spec=spec)
    assert tables.tables == {table.match_id: table}
    assert DealKeyring.for_store(store).ladder_key(table.match_id) is not None


async def test_a_cancel_reason_reaches_only_the_tables_it_names(store):
    tables = runner(store)
    cup, other, slot = FakeTable("m-cup", "forever"), FakeTable("m-other", "forever"), \
        FakeTable("m-slot", "forever")
    cup.tournament_id, other.tournament_id = "cup", "other"
    slot.tournament_id, slot.slot = "other", ("other", 3)
    for table in (cup, other, slot):
        tables.tables[table.match_id] = table  # type: ignore[assignment]
    tables.mark_cancelled("tournament cancelled", tournament_id="cup")
    tables.mark_cancelled("slot taken over by another node", slot=("other", 3))
    assert [t.cancel_reason for t in (cup, other, slot)] == [
        "tournament cancelled", None, "slot taken over by another node"]
    tables.cancel()  # a shutdown after: the first reason given holds
    assert [t.cancel_reason for t in (cup, other, slot)] == [
        "tournament cancelled", "server shutting down", "slot taken over by another node"]
