"""Thirteen cards played for real over TCP: both sample bots, house bots of
the game, the stored match, commit–reveal and what each seat may see."""

from __future__ import annotations

import asyncio
import shutil
import sys
from pathlib import Path

import pytest

from arena.games.thirteen import replay_record
from arena.games.thirteen.rules import ThirteenRules
from arena.server.local_bots import LocalBot, LocalBots
from arena.server.server import PlayerSpec
from arena.storage.base import MatchStatus
from arena.tournament.verify import verify_match
from protocol.deals import verify_reveal
from tests.server.thirteen_bots import ThirteenBot

ROOT = Path(__file__).resolve().parents[2]
PYTHON_BOT = [sys.executable, str(ROOT / "sample_bots" / "python_thirteen" / "bot.py")]
JS_BOT = ["node", str(ROOT / "sample_bots" / "js_thirteen" / "bot.js")]
HAS_NODE = shutil.which("node") is not None and (ROOT / "sample_bots" / "js_thirteen"
                                                  / "node_modules").is_dir()


async def _play_with_samples(server, *, rules, js: bool):
    spy = ThirteenBot()
    await spy.join(server.port, "spy")
    local = LocalBots()
    await local.start(LocalBot(name="py13", command=PYTHON_BOT), server)
    if js:
        await local.start(LocalBot(name="js13", command=JS_BOT), server)
    players = [PlayerSpec("py13"), PlayerSpec("js13") if js else
               PlayerSpec("house-random-1", house="random"),
               PlayerSpec("spy"), PlayerSpec("house-strong-1", house="strong")]
    try:
        play = asyncio.ensure_future(server.play_match(players, rules=rules, game="thirteen",
                                                       claim_timeout_s=20))
        end = await spy.play()
        outcome = await asyncio.wait_for(play, 30)
    finally:
        await local.stop()
        await spy.close()
    await server.writer.flush()
    return outcome, spy, end


@pytest.mark.parametrize("js", [pytest.param(True, marks=pytest.mark.skipif(
    not HAS_NODE, reason="node or the JS sample bot's packages are missing")), False])
async def test_a_thirteen_match_over_tcp_with_the_sample_bots_and_house_bots(make_server, js):
    # The server's default game is Muushig: the match's game comes with it.
    server = await make_server(decision_ms=5000)
    outcome, spy, end = await _play_with_samples(server, rules={"deals": 2}, js=js)
    assert outcome.result is not None, outcome.aborted

    record = server.store.get_match(outcome.match_id)
    assert record.status is MatchStatus.FINISHED and record.game == "thirteen"
    assert record.players == outcome.players
    result = record.result
    assert sum(result["totals"]) == 0 and len(result["deal_scores"]) == 2
    assert sorted(result["ranks"])[0] == 1
    # Every seat arranged by its own bot or house bot (no timeouts, no defaults).
    assert all(len(record.latency_ms[i]) == 2 for i in (0, 2) + ((1,) if js else ()))
    log = [e.data for e in server.store.get_events(record.id)]
    assert replay_record(record.rules, log).result() == result

    # Commit–reveal: the seat's commitments open to the revealed decks.
    assert end["result"] == result
    assert [entry["deal"] for entry in end["reveal"]] == [0, 1]
    assert verify_reveal(spy.commits(), end["reveal"]) == []
    assert verify_match(server.store, record.id).ok


async def test_match_start_carries_every_rule_with_its_exact_value(make_server):
    server = await make_server(decision_ms=5000)
    rules = {"deals": 1, "wheel": "second_highest", "mid_full_house_bonus": 1,
             "foul_policy": "reject", "shoot": "double"}
    _, spy, _ = await _play_with_samples(server, rules=rules, js=False)
    (start,) = [m for m in spy.seen if m["type"] == "match_start"]
    assert start["game"] == "thirteen" and len(start["players"]) == 4
    assert set(start["rules"]) == set(ThirteenRules().as_dict())
    assert start["rules"] == {**ThirteenRules().as_dict(), **rules}
    assert start["rules"]["mid_full_house_bonus"] == 1


async def test_each_deal_is_committed_asked_at_once_then_shown_down(make_server):
    server = await make_server(decision_ms=5000)
    _, spy, end = await _play_with_samples(server, rules={"deals": 2}, js=False)
    order = [m["event"]["kind"] if m["type"] == "event" else m["type"] for m in spy.seen
             if m["type"] in ("request", "event")]
    kinds = [k for k in order if k in ("commit", "request", "showdown")]
    assert kinds == ["commit", "request", "showdown"] * 2
    for deal, showdown in enumerate(spy.events("showdown")):
        assert showdown["deal"] == deal
        pairs, scores = showdown["pairs"], showdown["scores"]
        assert len(showdown["arrangements"]) == len(showdown["fouled"]) == len(pairs) == 4
        for i in range(4):
            assert pairs[i][i] == 0 and sum(pairs[i]) == scores[i]
            assert all(pairs[j][i] == -pairs[i][j] for j in range(4))
        assert showdown["totals"] == [sum(d[s] for d in end["result"]["deal_scores"][:deal + 1])
                                      for s in range(4)]
    request = next(m for m in spy.seen if m["type"] == "request")
    assert request["phase"] == "arrange" and "legal" not in request
    assert request["constraints"] == {"front": 3, "middle": 5, "back": 5}
    assert len(request["state"]["cards"]) == 13


async def test_no_message_before_a_showdown_shows_another_seats_cards(make_server):
    server = await make_server(decision_ms=5000)
    _, spy, _ = await _play_with_samples(server, rules={"deals": 3}, js=False)
    assert len(spy.events("showdown")) == 3
    assert spy.foreign_cards_before_showdown() == []
    # The showdown itself shows every seat's rows.
    showdown = spy.events("showdown")[0]
    assert sum(len(a["front"]) + len(a["middle"]) + len(a["back"])
               for a in showdown["arrangements"]) == 52


def test_the_secrecy_check_sees_a_card_of_another_seat():
    spy = ThirteenBot()
    request = {"type": "request", "state": {"cards": ["2H", "3H"]}}
    spy.seen = [request, {"type": "event", "event": {"kind": "arranged", "seat": 1, "cards": ["4S"]}}]
    assert spy.foreign_cards_before_showdown() == ["event arranged showed ['4S']"]
    spy.seen = [request, {"type": "event", "event": {"kind": "showdown", "cards": ["4S"]}}]
    assert spy.foreign_cards_before_showdown() == []
