"""A cancelled table's match is stored aborted with the canceller's reason:
a tournament's cancel or a slot given back is not a server shutdown, and a
shutdown still says so."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from arena.live import SERVER_SHUTTING_DOWN, SLOT_TAKEN_OVER, TOURNAMENT_CANCELLED
from arena.server.server import ArenaServer, PlayerSpec
from arena.storage.base import MatchStatus
from tests.server.rawbot import RawBot


async def _seated(server: ArenaServer) -> tuple[RawBot, asyncio.Task[Any], list[dict[str, Any]]]:
    """A match whose bot was asked and thinks (it never answers); what the
    live hub was told about its end."""
    ended: list[dict[str, Any]] = []
    told = server.hub.match_ended
    server.hub.match_ended = lambda match_id, info: (ended.append(info),  # type: ignore[method-assign]
                                                     told(match_id, info))[1]
    bot = await RawBot().connect(server.port)
    await bot.hello(token="quiet", name="quiet")
    players = [PlayerSpec("quiet")] + [PlayerSpec(f"house-random-{i}", house="random")
                                       for i in range(1, 5)]
    play = asyncio.create_task(server.play_match(players, claim_timeout_s=10))
    await bot.request(timeout=30)
    return bot, play, ended


def _stored_reason(server: ArenaServer) -> str | None:
    [record] = server.store.list_matches()
    assert record.status is MatchStatus.ABORTED
    return record.abort_reason


async def test_a_cancel_with_a_reason_stores_that_reason(make_server):
    server = await make_server(decision_ms=60_000)
    bot, play, ended = await _seated(server)
    play.cancel(TOURNAMENT_CANCELLED)
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(play, 30)
    await server.writer.flush()
    assert _stored_reason(server) == TOURNAMENT_CANCELLED
    assert [e["aborted"] for e in ended] == [TOURNAMENT_CANCELLED]
    await bot.close()


async def test_a_reason_given_to_the_table_before_the_cancel_holds(make_server):
    server = await make_server(decision_ms=60_000)
    bot, play, ended = await _seated(server)
    server.runner.mark_cancelled(SLOT_TAKEN_OVER)
    play.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(play, 30)
    await server.writer.flush()
    assert _stored_reason(server) == SLOT_TAKEN_OVER
    assert [e["aborted"] for e in ended] == [SLOT_TAKEN_OVER]
    await bot.close()


async def test_a_shutdown_still_says_shutdown(make_server):
    server = await make_server(decision_ms=60_000)
    bot, play, ended = await _seated(server)
    await server.stop()
    await asyncio.gather(play, return_exceptions=True)
    assert _stored_reason(server) == SERVER_SHUTTING_DOWN
    assert [e["aborted"] for e in ended] == [SERVER_SHUTTING_DOWN]
    await bot.close()
