"""The thirteen-card sample bots: their arrangements never foul, and each
plays a request over a real connection (the Python one through the SDK,
which passes the request's constraints to ``play``)."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from arena.games.thirteen.cards import CARD_INDEX, CARD_STR
from arena.games.thirteen.wire import check_arrangement
from protocol import Encoding, Event, Limits, MatchEnd, MatchStart, Request, commitment
from protocol.sdk import BotClient
from protocol.testing import ScriptedServer

ROOT = Path(__file__).resolve().parents[3]
PY_BOT = ROOT / "sample_bots" / "python_thirteen" / "bot.py"
JS_DIR = ROOT / "sample_bots" / "js_thirteen"
CONSTRAINTS = {"front": 3, "middle": 5, "back": 5}
RULES = {"deals": 1, "players": 4, "wheel": "lowest", "foul_policy": "reject", "shoot": "plus3",
         "mid_full_house_bonus": 2}


def load_python_bot():
    spec = importlib.util.spec_from_file_location("python_thirteen_bot", PY_BOT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def hands(n: int, seed: int) -> list[list[str]]:
    rng = random.Random(seed)
    return [[CARD_STR[c] for c in sorted(rng.sample(range(52), 13))] for _ in range(n)]


def assert_valid(action, cards, wheel):
    hand = tuple(CARD_INDEX[c] for c in cards)
    check_arrangement(action, hand, wheel, reject_fouls=True)  # raises on any fault, fouls included


@pytest.mark.parametrize("wheel", ["lowest", "second_highest"])
def test_python_sample_bot_never_fouls(wheel):
    bot = load_python_bot()
    bot.RULES.update({"wheel": wheel})
    for cards in hands(40, 1):
        assert_valid(bot.play("arrange", CONSTRAINTS, {"cards": cards}), cards, wheel)


@pytest.fixture(scope="module")
def node() -> str:
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node/npm is not installed, so the JavaScript sample bot cannot run")
    subprocess.run([str(JS_DIR / "build")], check=True, timeout=300)
    return shutil.which("node")


@pytest.mark.parametrize("wheel", ["lowest", "second_highest"])
def test_js_sample_strategy_never_fouls(node, wheel):
    deals = hands(40, 2)
    script = (
        "const {arrange}=require('./strategy');"
        "const deals=JSON.parse(require('fs').readFileSync(0,'utf8'));"
        f"console.log(JSON.stringify(deals.map(c=>arrange({json.dumps(CONSTRAINTS)},{{cards:c}},{{wheel:'{wheel}'}}))));"
    )
    out = subprocess.run([node, "-e", script], cwd=JS_DIR, input=json.dumps(deals), capture_output=True,
                         text=True, check=True, timeout=60)
    for cards, action in zip(deals, json.loads(out.stdout)):
        assert_valid(action, cards, wheel)


async def play_one_request(conn, cards):
    """Script one thirteen deal: match_start, commit, request; return the action."""
    deck = list(CARD_STR)
    await conn.send(MatchStart("t1", "thirteen", 2, ("a", "b", "c", "d"), RULES, Limits(5000, 0)))
    await conn.send(Event("t1", {"kind": "commit", "deal": 0, "commitment": commitment("salt", deck)}))
    state = {"deal": 0, "deals": 1, "seat": 2, "cards": cards, "totals": [0, 0, 0, 0],
             "arranged": [False] * 4}
    await conn.send(Request("t1", 1, "arrange", 5000, [], state, constraints=CONSTRAINTS))
    action = await conn.expect("action")
    await conn.send(MatchEnd("t1", {"totals": [0] * 4, "deal_scores": [[0] * 4], "ranks": [1] * 4},
                             [{"deal": 0, "salt": "salt", "deck": deck}]))
    return action


def test_a_constraints_request_round_trips_on_the_wire():
    req = Request("t1", 3, "arrange", 100, [], {"cards": []}, constraints=CONSTRAINTS)
    wire = req.to_wire()
    assert "legal" not in wire and wire["constraints"] == CONSTRAINTS
    assert Request.from_wire(wire) == req


@pytest.mark.parametrize("encoding", list(Encoding))
async def test_python_sample_bot_answers_an_arrange_request_through_the_sdk(encoding):
    bot = load_python_bot()
    cards = hands(1, 3)[0]
    async with ScriptedServer() as server:
        client = BotClient("127.0.0.1", server.port, "tok", "py13", bot.play, encoding, game="thirteen",
                           on_match_start=bot.remember_rules, max_matches=1)
        task = asyncio.create_task(client.run())
        conn = await server.accept()
        hello = await conn.handshake()
        assert hello["game"] == "thirteen"
        action = await play_one_request(conn, cards)
        assert action["match"] == "t1" and action["id"] == 1
        assert_valid(action["action"], cards, "lowest")
        await conn.expect("bye")
        await asyncio.wait_for(task, 5)
    assert client.finished[-1].deal_problems == []  # the commit of deal 0 checked out


async def test_js_sample_bot_answers_an_arrange_request(node):
    cards = hands(1, 4)[0]
    async with ScriptedServer() as server:
        proc = await asyncio.create_subprocess_exec(
            node, str(JS_DIR / "bot.js"), "--port", str(server.port), "--token", "tok", "--max-matches", "1",
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            conn = await server.accept(timeout=20)
            hello = await conn.handshake()
            assert hello["game"] == "thirteen" and conn.encoding is Encoding.MSGPACK
            action = await play_one_request(conn, cards)
            assert_valid(action["action"], cards, "lowest")
            await conn.expect("bye")
            assert await asyncio.wait_for(proc.wait(), 10) == 0
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()


def test_the_python_sample_bot_runs_as_a_script():
    out = subprocess.run([sys.executable, str(PY_BOT), "--help"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "--token" in out.stdout
