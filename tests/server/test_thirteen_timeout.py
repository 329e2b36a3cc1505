"""Every seat arranges at once, each against its own deadline: a silent
seat gets the default arrangement and a ``timeout`` event; the others are
not held up and keep the time that is theirs."""

from __future__ import annotations

import asyncio
import random

from arena.games.thirteen.bots import make_strong
from arena.server.server import PlayerSpec
from tests.server.thirteen_bots import ThirteenBot

DECISION_MS = 1000  # room for the quick seat to arrange on a loaded machine
BANK_MS = 1500


def _rows(arrangement: dict) -> dict:
    return {row: sorted(arrangement[row]) for row in ("front", "middle", "back")}


async def _play(server, quick: ThirteenBot, quiet: ThirteenBot, *, deals: int):
    players = [PlayerSpec("quiet"), PlayerSpec("house-strong-1", house="strong"),
               PlayerSpec("quick"), PlayerSpec("house-random-1", house="random")]
    await quiet.join(server.port, "quiet")
    await quick.join(server.port, "quick")
    return asyncio.ensure_future(server.play_match(players, rules={"deals": deals},
                                                   game="thirteen", claim_timeout_s=5))


async def _late_answer(quiet: ThirteenBot) -> dict:
    """Stay silent; once timed out in deal 0, answer deal 0's request."""
    first = None
    while True:
        message = await quiet.recv()
        assert message is not None
        if message["type"] == "request" and first is None:
            first = message
        elif message["type"] == "event" and message["event"]["kind"] == "timeout" \
                and message["event"]["seat"] == 0 and first is not None:
            await quiet.answer(first, make_strong(random.Random(0), None)(
                "arrange", first["constraints"], first["state"]))
        elif message["type"] == "error":
            return message


async def test_a_silent_seat_gets_the_default_arrangement_and_a_timeout_event(make_server):
    server = await make_server(decision_ms=DECISION_MS, bank_ms=0)
    quick, quiet = ThirteenBot(), ThirteenBot()
    try:
        play = await _play(server, quick, quiet, deals=2)
        quiet_task = asyncio.ensure_future(_late_answer(quiet))
        end = await quick.play()
        late = await asyncio.wait_for(quiet_task, 5)
        outcome = await asyncio.wait_for(play, 10)
    finally:
        await quick.close()
        await quiet.close()
    assert late["code"] == "late"
    assert outcome.result is not None
    # Everyone sees the silent seat's timeouts, nobody else's.
    assert quick.events("timeout") == [{"kind": "timeout", "seat": 0, "phase": "arrange"}] * 2
    # The default is the house strategy's unfouled arrangement of its own cards.
    rules = quick.rules
    for deal, request in enumerate(m for m in quiet.seen if m["type"] == "request"):
        showdown = quick.events("showdown")[deal]
        default = make_strong(random.Random(0), rules)("arrange", request["constraints"],
                                                       request["state"])
        assert _rows(showdown["arrangements"][0]) == _rows(default)
        assert showdown["fouled"][0] is False
    # The quick seat's own arrangements stand, and it was asked before the
    # silent seat's deadline ran out in every deal (all seats at once, not
    # a deadline per seat in turn).
    for deal, answered in enumerate(m for m in quick.seen if m["type"] == "request"):
        mine = make_strong(random.Random(0), rules)("arrange", answered["constraints"],
                                                    answered["state"])
        assert _rows(quick.events("showdown")[deal]["arrangements"][2]) == _rows(mine)
    order = ["request" if m["type"] == "request" else "timeout" for m in quick.seen
             if m["type"] == "request"
             or (m["type"] == "event" and m["event"]["kind"] == "timeout")]
    assert order == ["request", "timeout"] * 2
    assert end["result"]["totals"] == quick.events("showdown")[-1]["totals"]
    await server.writer.flush()
    record = server.store.get_match(outcome.match_id)
    assert len(record.latency_ms[2]) == 2 and record.latency_ms[0] == []


async def test_each_seat_is_timed_against_its_own_deadline(make_server):
    # Deal 0: the silent seat times out, which empties its bank; deal 1:
    # its deadline is the bare decision time, the other seat keeps its bank
    # and answers after the silent seat's deadline without a timeout.
    server = await make_server(decision_ms=DECISION_MS, bank_ms=BANK_MS)
    quick, quiet = ThirteenBot(), ThirteenBot(silent=True)
    try:
        play = await _play(server, quick, quiet, deals=2)
        quiet_task = asyncio.ensure_future(quiet.play())
        requests = []
        arrange = None
        while True:
            message = await quick.recv()
            assert message is not None
            if message["type"] == "match_start":
                arrange = make_strong(random.Random(0), message["rules"])
            elif message["type"] == "request":
                requests.append(message)
                if len(requests) == 2:  # slower than the decision time, within the bank
                    await asyncio.sleep((DECISION_MS + 250) / 1000)
                await quick.answer(message, arrange(message["phase"], message["constraints"],
                                                    message["state"]))
            elif message["type"] == "match_end":
                break
        await quiet_task
        outcome = await asyncio.wait_for(play, 10)
    finally:
        await quick.close()
        await quiet.close()
    assert outcome.result is not None
    quiet_requests = [m for m in quiet.seen if m["type"] == "request"]
    assert [r["deadline_ms"] for r in quiet_requests] == [DECISION_MS + BANK_MS, DECISION_MS]
    assert requests[1]["deadline_ms"] == DECISION_MS + BANK_MS
    assert quick.events("timeout") == [{"kind": "timeout", "seat": 0, "phase": "arrange"}] * 2
    assert not [m for m in quick.seen if m["type"] == "error"]
