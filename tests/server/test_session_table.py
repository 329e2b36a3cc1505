"""The table as bots meet it, with in-process connections (no sockets).

Early faults, storage failures, errors that name their match, returns from
autopilot, the grace before an abandoned match is aborted, and matches
nobody's own bot played.
"""

from __future__ import annotations

import asyncio
import random
import sqlite3
from typing import Any

import pytest
from structlog.testing import capture_logs

from arena.games import get_game
from arena.server import table as table_module
from arena.server.connection import Identity
from arena.server.lobby import Lobby
from arena.server.seats import Seat, SeatKind
from arena.server.table import TimeLimits, Table
from arena.storage.base import MatchStatus
from arena.storage.sqlite import SqliteStore
from arena.storage.writer import StoreWriter
from protocol.codec import Decoder, Encoding, encode
from tests.server.rawbot import RawBot

SPEC = get_game("muushig")


class FakeConn:
    """A connection that records what it is sent and, when ``auto``,
    answers each request with its first legal action on the next turn."""

    _ids = iter(range(1, 1 << 30))

    def __init__(self, bot: str, *, auto: bool = True) -> None:
        self.id = next(self._ids)
        self.identity = Identity(bot=bot, token_hash=f"hash-{bot}")
        self.encoding = Encoding.MSGPACK
        self.closed = False
        self.seated: Any = None
        self.awaiting_life = False
        self.auto = auto
        self.answer_with: Any = None  # a fixed (maybe illegal) answer, once
        self.decoder = Decoder.for_client(Encoding.MSGPACK)
        self.seen: list[dict[str, Any]] = []

    @property
    def bot(self) -> str:
        return self.identity.bot

    def send(self, message: dict[str, Any]) -> None:
        self.send_bytes(encode(message, self.encoding))

    def send_error(self, code: Any, message: str, request_id: int | None = None,
                   match: str | None = None) -> None:
        wire: dict[str, Any] = {"type": "error", "code": str(code), "message": message}
        if request_id is not None:
            wire["id"] = request_id
        if match is not None:
            wire["match"] = match
        self.send(wire)

    def send_bytes(self, data: bytes, ends_with_request: bool = False) -> None:
        if self.closed:  # (no rate bucket here to credit for a request)
            return
        self.decoder.receive_data(data)
        while (message := self.decoder.next_message()) is not None:
            self.seen.append(message)
            if message["type"] == "request" and self.auto:
                action = message["legal"][0]
                if self.answer_with is not None:
                    action, self.answer_with = self.answer_with, None
                asyncio.get_running_loop().call_soon(self._answer, message, action)

    def _answer(self, request: dict[str, Any], action: Any) -> None:
        table = self.seated
        if table is not None and not self.closed:
            table.answer(self, request["match"], request["id"], action)


    def drop(self) -> None:
        self.closed = True
        if self.seated is not None:
            self.seated.seat_disconnected(self)

    def types(self) -> list[str]:
        return [m["type"] for m in self.seen]

    def events(self, kind: str) -> list[dict[str, Any]]:
        return [m["event"] for m in self.seen if m["type"] == "event" and m["event"]["kind"] == kind]


def house() -> Any:
    return SPEC.house_bots[SPEC.default_house_bot](random.Random(7))


def make_table(writer: StoreWriter, conns: list[FakeConn], *, released: list | None = None,
               decision_ms: int = 2000, bank_ms: int = 0, timeouts: int = 3,
               **extra: Any) -> Table:
    seats = [Seat(index=i, name=c.bot, kind=SeatKind.REMOTE, house=house(),
                  token_hash=c.identity.token_hash, conn=c) for i, c in enumerate(conns)]
    seats += [Seat(index=i, name=f"house-{i}", kind=SeatKind.HOUSE, house=house())
              for i in range(len(conns), SPEC.n_seats)]
    return Table(match_id=f"m-{random.random():.12f}", spec=SPEC,
                 engine=SPEC.new_match(None, random.Random(3), None), seats=seats,
                 limits=TimeLimits(decision_ms, bank_ms, timeouts), writer=writer,
                 on_seat_released=(released.append if released is not None else None), **extra)


@pytest.fixture
async def store(tmp_path):
    store = SqliteStore(str(tmp_path / "arena.db"))
    yield store
    store.close()


@pytest.fixture
async def writer(store):
    writer = StoreWriter(store)
    yield writer
    await writer.close()


async def run(table: Table, timeout: float = 30.0) -> Any:
    async with asyncio.timeout(timeout):
        return await table.run()


# -- issue: early faults -------------------------------------------------------


async def test_a_seat_dropped_before_the_match_row_is_stored_leaves_a_stored_match(writer, store):
    dropped, steady = FakeConn("dropped"), FakeConn("steady")
    table = make_table(writer, [dropped, steady])
    dropped.drop()  # before run(): before the match row exists
    result = await run(table)
    assert result is not None and table.aborted is None
    await writer.flush()
    record = store.get_match(table.match_id)
    assert record.status is MatchStatus.FINISHED
    log = [e.data for e in store.get_events(table.match_id)]
    assert {"kind": "autopilot", "seat": 0, "reason": "disconnected"} in log
    assert steady.types()[-1] == "match_end"


async def test_nothing_of_a_match_reaches_a_bot_before_its_match_start(writer):
    dropped, steady = FakeConn("dropped"), FakeConn("steady")
    table = make_table(writer, [dropped, steady])
    dropped.drop()
    await run(table)
    assert steady.types()[0] == "match_start"
    assert steady.types().count("match_end") == 1 and steady.types()[-1] == "match_end"


# -- issue: the store fails ------------------------------------------------------


class BrokenStore(SqliteStore):
    # A new exception per failure, as a real store raises: one kept and
    # raised again would gather the frames (and tables) of every raise.
    broken: Any = None  # makes the exception

    def create_match(self, record):
        if self.broken is not None:
            raise self.broken()
        return super().create_match(record)


@pytest.mark.parametrize("broken", [lambda: sqlite3.OperationalError("database or disk is full"),
                                    lambda: OSError(30, "Read-only file system")])
async def test_a_store_that_cannot_create_the_match_releases_the_seats(tmp_path, monkeypatch,
                                                                      broken):
    monkeypatch.setattr(table_module, "STORE_RETRY_S", 0.0)
    store = BrokenStore(str(tmp_path / "arena.db"))
    store.broken = broken
    failure = broken()
    writer = StoreWriter(store)
    try:
        conns = [FakeConn("a"), FakeConn("b")]
        released: list = []
        with capture_logs() as logs:
            result = await run(make_table(writer, conns, released=released))
            assert result is None
            # A second failure while the store is still down is not logged again.
            assert await run(make_table(writer, conns, released=[])) is None
        assert released == conns
        assert all(c.seated is None for c in conns)
        assert all(c.seen == [] for c in conns)  # no match_start for a match that never was
        errors = [e for e in logs if e["log_level"] == "error"]
        assert len(errors) == 1 and str(failure) in errors[0]["cause"]
        assert writer.healthy is False and str(failure) in (writer.last_error or "")
        store.broken = None  # space is back
        table = make_table(writer, conns)
        assert await run(table) is not None
        assert writer.healthy is True and writer.last_error is None
        await writer.flush()
        assert store.get_match(table.match_id).status is MatchStatus.FINISHED
    finally:
        await writer.close()
        store.close()


# -- issue: errors name their match -------------------------------------------------


async def test_illegal_late_and_unknown_errors_carry_match_and_id(writer):
    bot = FakeConn("bot")
    bot.answer_with = "maybe"
    table = make_table(writer, [bot])
    await run(table)
    errors = [m for m in bot.seen if m["type"] == "error"]
    (illegal,) = errors
    assert illegal["code"] == "illegal_action"
    assert illegal["match"] == table.match_id and isinstance(illegal["id"], int)
    # After the end the seat is released; answers before that name the match too.
    table2 = make_table(writer, [other := FakeConn("other", auto=False)])
    task = asyncio.ensure_future(table2.run())
    async with asyncio.timeout(10):
        while "request" not in other.types():
            await asyncio.sleep(0.001)
    request = next(m for m in other.seen if m["type"] == "request")
    table2.answer(other, request["match"], request["id"] + 1000, "enter")
    table2.answer(other, request["match"], request["id"], request["legal"][0])
    table2.answer(other, request["match"], request["id"], request["legal"][0])
    other.auto = True
    async with asyncio.timeout(30):
        while not task.done():
            await asyncio.sleep(0.001)
            for m in list(other.seen):
                if m["type"] == "request" and m.get("answered") is None:
                    m["answered"] = True
                    other._answer(m, m["legal"][0])
    codes = [(m["code"], m.get("match"), m.get("id")) for m in other.seen if m["type"] == "error"]
    assert codes[:2] == [("unknown_request", table2.match_id, request["id"] + 1000),
                         ("late", table2.match_id, request["id"])]


# -- issue: one rule for coming back from autopilot -----------------------------------


async def test_a_bot_autopiloted_for_timeouts_gets_its_seat_back_and_all_are_told(writer):
    silent, watcher = FakeConn("silent", auto=False), FakeConn("watcher")
    table = make_table(writer, [silent, watcher], decision_ms=10, timeouts=1)
    task = asyncio.ensure_future(run(table))
    async with asyncio.timeout(10):
        while not silent.events("autopilot"):
            await asyncio.sleep(0.001)
    assert silent.events("autopilot")[0]["reason"] == "timeouts"
    assert silent.awaiting_life is True
    back = FakeConn("silent")
    back.identity = silent.identity
    silent.drop()
    assert table.reattach(back) is True
    await task
    assert back.types()[0] == "match_start" and "request" in back.types()
    returned = {"kind": "autopilot", "seat": 0, "reason": "returned"}
    assert returned in watcher.events("autopilot")
    assert returned in back.events("autopilot")


# -- issue: a grace period before an abandoned match is aborted ----------------------


async def test_a_bot_that_returns_within_the_grace_finishes_the_match(writer, store):
    bot = FakeConn("bot")
    table = make_table(writer, [bot], abandon_grace_s=5.0)
    task = asyncio.ensure_future(run(table))
    async with asyncio.timeout(10):
        while "request" not in bot.types():
            await asyncio.sleep(0.001)
    bot.auto = False
    bot.drop()
    await asyncio.sleep(0.05)
    assert not task.done()  # every bot left, but the grace is not over
    back = FakeConn("bot")
    back.identity = bot.identity
    assert table.reattach(back) is True
    assert await task is not None
    await writer.flush()
    assert store.get_match(table.match_id).status is MatchStatus.FINISHED


async def test_a_match_nobody_returns_to_is_aborted_after_the_grace(writer, store):
    bot = FakeConn("bot")
    table = make_table(writer, [bot], abandon_grace_s=1.0)
    task = asyncio.ensure_future(run(table))
    async with asyncio.timeout(10):
        while "request" not in bot.types():
            await asyncio.sleep(0.001)
    bot.drop()
    for _ in range(3):  # the drop is handled, and the match waits out the grace
        await asyncio.sleep(0)
    assert not task.done()
    assert await task is None
    await writer.flush()
    record = store.get_match(table.match_id)
    assert record.status is MatchStatus.ABORTED


# -- issue: matches no bot played -----------------------------------------------------


async def test_a_match_no_seat_of_which_was_played_by_its_bot_does_not_count(writer, store):
    idle = [FakeConn("idle1", auto=False), FakeConn("idle2", auto=False)]
    table = make_table(writer, idle, decision_ms=5, timeouts=1)
    assert await run(table) is None
    assert table.aborted == "no seat was played by its bot"
    await writer.flush()
    assert store.get_match(table.match_id).status is MatchStatus.ABORTED
    assert all(c.awaiting_life for c in idle)


async def test_the_lobby_does_not_seat_a_connection_awaiting_life():
    started: list = []
    lobby = Lobby(seats=2, matchmaking=True, house_wait_s=None,
                  start_table=lambda conns, house: started.append(conns))
    asleep, awake, other = FakeConn("asleep"), FakeConn("awake"), FakeConn("other")
    asleep.awaiting_life = True
    lobby.add(asleep)
    lobby.add(awake)
    assert started == []
    with pytest.raises(TimeoutError):
        await lobby.claim("asleep", 0.05)
    lobby.add(other)
    assert started == [[awake, other]]


async def test_a_connection_awaiting_life_is_seated_again_once_it_speaks(make_server):
    server = await make_server(house_wait_s=0.0, decision_ms=30, timeouts_before_autopilot=1)
    bot = await RawBot().connect(server.port)
    await bot.hello("sleepy-token", "sleepy")
    first = await bot.until(lambda m: m["type"] == "match_start")
    await bot.event("autopilot")  # its one timeout: the match is never its bot's
    async with asyncio.timeout(10):
        while first["match"] in server.tables:
            await asyncio.sleep(0.01)
    with pytest.raises(TimeoutError):  # not seated again while it sleeps
        await bot.until(lambda m: m["type"] == "match_start", timeout=0.3)
    await bot.send({"type": "action", "match": first["match"], "id": 1, "action": "enter"})
    again = await bot.until(lambda m: m["type"] == "match_start", timeout=5)
    assert again["match"] != first["match"]
    await bot.close()


class SlotStore(SqliteStore):
    slots: list = []

    def finish_match(self, match_id, *, slot=None, **fields):
        self.slots.append(slot)
        return super().finish_match(match_id, **fields)


async def test_the_tournament_slot_is_passed_on_to_finish_the_match(tmp_path):
    store = SlotStore(str(tmp_path / "arena.db"))
    writer = StoreWriter(store)
    try:
        assert await run(make_table(writer, [FakeConn("a")], slot=("t1", 4))) is not None
        assert await run(make_table(writer, [FakeConn("b")])) is not None
        assert store.slots == [("t1", 4), None]
    finally:
        await writer.close()
        store.close()
