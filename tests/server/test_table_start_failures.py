"""A table that cannot be created (a full disk, a failing write) costs its
bots a wait, never their place: they go back to the lobby, the lobby tries
again after a backoff, and the failure is logged without flooding the log.

Seen before: with the disk full, the ladder key's file write raised inside
matchmaking, out of the bot's ``data_received`` and out of the house-fill
timer; the bots were neither seated nor waiting any more, and after the disk
was freed no match ever started again.
"""

from __future__ import annotations

import asyncio
import errno
from typing import Any

import pytest
import structlog

from arena.server.lobby import Lobby
from arena.server.matches import PlayerSpec
from arena.server.retry import Backoff, LogThrottle
from tests.server.rawbot import RawBot


class FlakyTables:
    """Makes the server's ``runner.new_table`` fail as a full disk does, while ``failing``."""

    def __init__(self, server: Any) -> None:
        self.real = server.runner.new_table
        self.failing = True
        self.attempts = 0
        server.runner.new_table = self

    def __call__(self, seats: list, **kwargs: Any) -> Any:
        self.attempts += 1
        if self.failing:
            raise OSError(errno.ENOSPC, "No space left on device")
        return self.real(seats, **kwargs)


async def wait_for(condition: Any, timeout: float = 20.0) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.02)


async def test_a_house_filled_table_that_fails_is_retried_until_the_bot_plays(make_server):
    server = await make_server(house_wait_s=0.0, decision_ms=300, bank_ms=0)
    flaky = FlakyTables(server)
    bot = await RawBot().connect(server.port)
    with structlog.testing.capture_logs() as logs:
        assert (await bot.hello("t", "patient"))["type"] == "welcome"
        await wait_for(lambda: flaky.attempts >= 3)
    # Meanwhile the bot waits in the lobby, connected, not seated.
    assert server.lobby.idle_bots() == ["patient"]
    assert not [m for m in bot.seen if m["type"] == "match_start"]
    failures = [e for e in logs if e["event"] == "table_start_failed"]
    assert failures and len(failures) < flaky.attempts  # rate-limited, not one per attempt
    assert "No space left on device" in failures[0]["cause"]
    assert failures[0]["log_level"] == "error"

    flaky.failing = False
    start = await bot.until(lambda m: m["type"] == "match_start", timeout=20)
    assert start["players"][start["seat"]] == "patient"
    end = await bot.play_to_end()
    assert end["type"] == "match_end"
    await bot.close()


async def test_matchmaking_from_a_hello_survives_a_failing_table(make_server):
    # The last hello completes a table: the failure used to escape the bot's
    # data_received and kill that connection.
    server = await make_server(house_wait_s=None, decision_ms=300, bank_ms=0)
    flaky = FlakyTables(server)
    bots = [await RawBot().connect(server.port) for _ in range(server.spec.n_seats)]
    for i, bot in enumerate(bots):
        assert (await bot.hello(f"t{i}", f"b{i}"))["type"] == "welcome"
    await wait_for(lambda: flaky.attempts >= 2)
    assert sorted(server.lobby.idle_bots()) == sorted(f"b{i}" for i in range(len(bots)))

    flaky.failing = False
    for bot in bots:
        await bot.until(lambda m: m["type"] == "match_start", timeout=20)
    await asyncio.gather(*(bot.play_to_end() for bot in bots))
    for bot in bots:
        await bot.close()


async def test_a_claimed_bot_goes_back_to_the_lobby_when_its_table_fails(make_server):
    server = await make_server(house_wait_s=None, matchmaking=False)
    flaky = FlakyTables(server)
    bot = await RawBot().connect(server.port)
    assert (await bot.hello("t", "claimed"))["type"] == "welcome"
    await wait_for(lambda: server.lobby.idle_bots() == ["claimed"])
    players = [PlayerSpec("claimed")] + [PlayerSpec(f"h{i}", house="random")
                                         for i in range(server.spec.n_seats - 1)]
    with pytest.raises(OSError, match="No space left"):
        await server.play_match(players, claim_timeout_s=5)
    assert server.lobby.idle_bots() == ["claimed"]
    flaky.failing = False
    outcome = await server.play_match(players, claim_timeout_s=5)
    assert outcome.players[0] == "claimed"
    await bot.close()


# -- the pure parts, on a clock the test moves ---------------------------------------------
def test_the_backoff_doubles_up_to_its_cap_and_resets_on_success() -> None:
    backoff = Backoff(first_s=0.25, max_s=2.0)
    assert backoff.ready(0.0)
    assert [backoff.failed(0.0) for _ in range(6)] == [0.25, 0.5, 1.0, 2.0, 2.0, 2.0]
    assert not backoff.ready(1.9) and backoff.ready(2.0)
    assert backoff.remaining(1.5) == 0.5
    assert backoff.succeeded() == 6
    assert backoff.ready(0.0) and backoff.failed(10.0) == 0.25


def test_the_log_throttle_lets_one_line_through_per_period_and_counts_the_rest() -> None:
    throttle = LogThrottle(every_s=60.0)
    assert throttle.allow(0.0) == 0
    assert [throttle.allow(t) for t in (1.0, 2.0, 59.0)] == [None, None, None]
    assert throttle.allow(60.0) == 3  # three were held back since the last line
    assert throttle.allow(61.0) is None


async def test_the_lobby_keeps_the_waiting_order_of_a_group_whose_table_failed() -> None:
    started: list[list[str]] = []
    fail = [True]

    def start(conns: list, house: int) -> None:
        if fail[0]:
            raise RuntimeError("the table cannot be built")
        started.append([c.bot for c in conns])

    class Conn:
        def __init__(self, i: int) -> None:
            self.id, self.bot, self.closed, self.awaiting_life, self.ladder = i, f"b{i}", False, False, False

    lobby = Lobby(seats=2, matchmaking=True, house_wait_s=None, start_table=start,
                  retry=Backoff(first_s=0.01, max_s=0.01))
    for i in range(3):
        lobby.add(Conn(i))  # type: ignore[arg-type]
    assert lobby.idle_bots() == ["b0", "b1", "b2"]
    fail[0] = False
    await wait_for(lambda: bool(started), timeout=5)
    assert started == [["b0", "b1"]] and lobby.idle_bots() == ["b2"]
