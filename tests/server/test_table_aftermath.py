"""What a table leaves behind when it ends early: nothing of it may ride
along with what comes after.

Seen before: a cancelled table gave its seats back (and so seated its bots
at the next table) while its CancelledError was still being handled, so
every exception of what followed carried that CancelledError, and with it
the old table's frames, as its ``__context__``: failures showed long chains
of cancellations from older tables, and those tables stayed reachable.
"""

from __future__ import annotations

import asyncio
import errno
import gc
from typing import Any

from structlog.testing import capture_logs

from arena.server.config import ServerConfig
from arena.server.server import ArenaServer
from arena.server.table import Table
from arena.storage.sqlite import SqliteStore
from tests.server.rawbot import RawBot


async def wait_for(condition: Any, timeout: float = 20.0) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.02)


async def full_table(server: Any, prefix: str) -> tuple[list[RawBot], Table, asyncio.Task[Any]]:
    """A lobby table of remote bots, playing (every bot has its match_start)."""
    bots = [await RawBot().connect(server.port) for _ in range(server.spec.n_seats)]
    for i, bot in enumerate(bots):
        assert (await bot.hello(f"t{i}", f"{prefix}{i}"))["type"] == "welcome"
    for bot in bots:
        await bot.until(lambda m: m["type"] == "match_start", timeout=20)
    (table,) = server.tables.values()
    (task,) = server.runner._tasks
    return bots, table, task


class Kept:
    """Whether objects are still alive after a collection. Not weak
    references: the compiled build's table and session take none. An object
    is found again by its address and type among those the collector
    tracks; nothing of the same type is made between the two looks."""

    def __init__(self, *objects: object) -> None:
        self.marks = {(id(o), type(o)) for o in objects}

    def alive(self) -> int:
        gc.collect()
        return sum(1 for o in gc.get_objects() if (id(o), type(o)) in self.marks)


def failing_tables(server: Any) -> list[str]:
    """Make the server's next tables fail to build (as a full disk does);
    for each failure the lobby sees, what came with it (its
    ``__context__`` or ``__cause__``, by name), kept as text so the list
    holds no exception or frame."""
    seen: list[str] = []

    def build(seats: list, **kwargs: Any) -> Any:
        raise OSError(errno.ENOSPC, "No space left on device")

    def failed(group: list, exc: BaseException) -> None:
        attached = exc.__cause__ or exc.__context__
        seen.append("nothing" if attached is None else repr(attached))
        start_failed(group, exc)

    server.runner.new_table = build
    start_failed, server.lobby._start_failed = server.lobby._start_failed, failed
    return seen


async def test_a_new_table_after_a_cancelled_one_carries_nothing_of_it(make_server):
    server = await make_server(house_wait_s=None, decision_ms=60_000, bank_ms=0)
    bots, table, task = await full_table(server, "b")
    failures = failing_tables(server)
    task.cancel()  # a directed match given up; the server plays on
    await wait_for(lambda: failures)
    # The bots went back to the lobby and were grouped for a new table at
    # once; building it failed with nothing of the old table attached.
    assert failures[0] == "nothing"
    assert sorted(server.lobby.idle_bots()) == sorted(f"b{i}" for i in range(len(bots)))
    old = Kept(table, table.session)
    assert old.alive() == 2
    del table, task
    for bot in bots:
        await bot.close()
    assert old.alive() == 0


async def test_a_crash_in_a_later_table_carries_nothing_of_an_earlier_one(make_server, tmp_path):
    # The first server is not the fixture's: nothing else may hold it.
    store = SqliteStore(str(tmp_path / "first.db"))
    first = ArenaServer(ServerConfig(host="127.0.0.1", port=0, http_port=None, open=True,
                                     db=str(tmp_path / "first.db"), house_wait_s=None,
                                     decision_ms=60_000, bank_ms=0), store)
    await first.start()
    bots, table, task = await full_table(first, "a")
    await first.stop()  # cancels the table mid-match
    store.close()
    assert task.cancelled()
    old = Kept(first, table, table.session)
    assert old.alive() == 3
    del first, table, task
    for bot in bots:
        await bot.close()
    assert old.alive() == 0

    second = await make_server(house_wait_s=None, decision_ms=60_000, bank_ms=0)
    with capture_logs() as logs:
        bots, table, task = await full_table(second, "c")
        crash = RuntimeError("a fault of the server's own")

        def broken(*args: Any) -> None:
            raise crash

        table._step(broken)  # the next input the session gets fails
        await asyncio.wait([task], timeout=20)
    assert task.done() and not task.cancelled()
    assert [e["log_level"] for e in logs if e["event"] == "match_crashed"] == ["error"]
    assert crash.__context__ is None and crash.__cause__ is None
    for bot in bots:
        await bot.close()


async def test_a_table_cancelled_before_its_match_was_stored_gives_its_seats_back(make_server):
    server = await make_server(house_wait_s=None, decision_ms=60_000, bank_ms=0)
    stored = asyncio.Event()

    async def slow_create(record: Any) -> None:
        await stored.wait()  # a store that takes its time

    server.writer.create_match = slow_create
    bots = [await RawBot().connect(server.port) for _ in range(server.spec.n_seats)]
    for i, bot in enumerate(bots):
        assert (await bot.hello(f"t{i}", f"s{i}"))["type"] == "welcome"
    await wait_for(lambda: server.runner._tasks)
    (task,) = server.runner._tasks
    failures = failing_tables(server)
    task.cancel()
    await wait_for(lambda: failures)  # the bots were grouped again: they were free
    assert failures[0] == "nothing"
    assert all(m["type"] != "match_start" for bot in bots for m in bot.seen)
    for bot in bots:
        await bot.close()
