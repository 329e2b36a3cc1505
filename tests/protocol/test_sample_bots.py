"""The Python sample bots: their strategies, and each one as a real process."""

from __future__ import annotations

import asyncio
import importlib.util
import os
import random
import signal
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import Limits, MatchStart, Request
from protocol.testing import ScriptedServer

ROOT = Path(__file__).resolve().parents[2]
CARDS = [rank + suit for suit in "HSDC" for rank in "789TJQKA"]


def load(name: str):
    spec = importlib.util.spec_from_file_location(f"sample_{name}", ROOT / "sample_bots" / name / "bot.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


heuristic = load("python_heuristic")
randbot = load("python_random")


def state(cards, trump="H", face_up="9H", **extra):
    base = {"round": 0, "hand": 0, "dealer": 0, "seat": 2, "trump": trump, "face_up": face_up,
            "cards": cards, "status": ["waiting"] * 5, "trick": [], "leader": None}
    return base | extra


# -- the heuristic, rule by rule --

def test_enters_with_trumps_and_aces_folds_with_rags():
    assert heuristic.choose("decide", ["enter", "fold"], state(["AH", "KH", "AS", "7D", "8C"])) == "enter"
    assert heuristic.choose("decide", ["enter", "fold"], state(["7S", "8S", "9D", "TC", "JC"])) == "fold"


def test_folds_by_others_make_entering_easier():
    hand = ["TH", "QS", "9D", "8C", "JC"]  # a trump ten and a queen: under one trick
    assert heuristic.choose("decide", ["enter", "fold"], state(hand)) == "fold"
    folded = state(hand, status=["folded", "waiting", "waiting", "folded", "folded"])
    assert heuristic.choose("decide", ["enter", "fold"], folded) == "enter"


def test_exchange_throws_low_off_trump_cards_within_the_allowed_sets():
    hand = ["7H", "AS", "8S", "9D", "KC"]
    legal = [[]] + [[c] for c in hand] + [sorted([a, b], key=CARDS.index) for i, a in enumerate(hand) for b in hand[i + 1:]]
    assert sorted(heuristic.choose("exchange", legal, state(hand))) == ["8S", "9D"]


def test_dealer_takes_the_face_up_trump_for_the_weakest_card():
    hand = ["AH", "AS", "8S", "KD", "QC"]
    assert heuristic.choose("take", [None, *hand], state(hand, face_up="KH")) == "8S"
    trumps = ["AH", "KH", "QH", "JH", "TH"]
    assert heuristic.choose("take", [None, *trumps], state(trumps, face_up="7H")) is None


def test_follows_with_the_cheapest_winning_card():
    hand = ["9S", "QS", "AS", "7H"]
    trick = [[0, "8S"]]
    assert heuristic.choose("play", ["9S", "QS", "AS"], state(hand, trick=trick)) == "9S"


def test_trumps_in_cheaply_and_throws_the_weakest_when_it_cannot_win():
    assert heuristic.choose("play", ["7H", "KH"], state(["7H", "KH"], trick=[[0, "AS"]])) == "7H"
    lost = state(["7D", "QC"], trick=[[0, "8S"], [1, "AH"]])
    assert heuristic.choose("play", ["7D", "QC"], lost) == "7D"


def test_leads_its_strongest_card():
    assert heuristic.choose("play", ["AS", "7H", "KH"], state(["AS", "7H", "KH"])) == "KH"


def test_trump_given_as_a_card_is_understood():
    assert heuristic.trump_suit({"trump": "9D"}) == "D"
    assert heuristic.trump_suit({"face_up": "9C"}) == "C"


def test_an_unknown_phase_gets_the_first_legal_answer():
    assert heuristic.choose("arrange", [["x"], ["y"]], {}) == ["x"]


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_every_answer_of_both_bots_is_legal(data):
    rng = random.Random(data.draw(st.integers(0, 2**32)))
    deck = CARDS[:]
    rng.shuffle(deck)
    hand, face_up = deck[:5], deck[5]
    trick = [[seat, card] for seat, card in enumerate(deck[6 : 6 + rng.randint(0, 4)])]
    observed = state(hand, trump=face_up[1], face_up=face_up, trick=trick, status=rng.choices(["waiting", "entered", "folded"], k=5))
    phase = data.draw(st.sampled_from(["decide", "exchange", "take", "play"]))
    if phase == "decide":
        legal = ["enter", "fold"]
    elif phase == "exchange":
        legal = [[]] + [[card] for card in sorted(hand, key=CARDS.index)]
    elif phase == "take":
        legal = [None, *sorted(hand, key=CARDS.index)]
    else:
        legal = sorted(rng.sample(hand, rng.randint(1, 5)), key=CARDS.index)
    for bot in (heuristic, randbot):
        assert bot.choose(phase, list(legal), observed) in legal


# -- each bot as a process, configured by the environment or by flags --

@pytest.mark.parametrize("name", ["python_random", "python_heuristic"])
@pytest.mark.parametrize("configure", ["env", "flags"])
async def test_sample_bot_process_plays_a_request_of_every_phase(name, configure, tmp_path):
    async with ScriptedServer() as server:
        env = {key: value for key, value in os.environ.items() if not key.startswith("ARENA_")}
        args = [sys.executable, str(ROOT / "sample_bots" / name / "bot.py")]
        if configure == "env":
            env |= {"ARENA_HOST": "127.0.0.1", "ARENA_PORT": str(server.port), "ARENA_TOKEN": "tk", "ARENA_NAME": name}
        else:
            args += ["--host", "127.0.0.1", "--port", str(server.port), "--token", "tk", "--name", name, "--encoding", "jsonl"]
        proc = await asyncio.create_subprocess_exec(
            *args, env=env, cwd=tmp_path, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
        )
        try:
            conn = await server.accept(timeout=20)
            hello = await conn.handshake()
            assert (hello["token"], hello["name"]) == ("tk", name)
            assert conn.encoding == ("jsonl" if configure == "flags" else "msgpack")
            await conn.send(MatchStart("m", "muushig", 2, ("a", "b", "c", "d", "e"), {}, Limits(5000, 0)))
            hand = ["7H", "AH", "8S", "KD", "QC"]
            requests = [
                ("decide", ["enter", "fold"]),
                ("exchange", [[], ["7H"], ["8S"], ["7H", "8S"]]),
                ("take", [None, *hand]),
                ("play", ["7H", "AH"]),
            ]
            for number, (phase, legal) in enumerate(requests):
                await conn.send(Request("m", number, phase, 5000, legal, state(hand)))
                answer = await conn.expect("action")
                assert answer["id"] == number and answer["action"] in legal
            await conn.send({"type": "bye"})
            output, _ = await asyncio.wait_for(proc.communicate(), 20)
            assert proc.returncode == 0, output.decode()
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()


async def test_sigterm_makes_a_sample_bot_say_bye_and_exit(tmp_path):
    async with ScriptedServer() as server:
        env = {key: value for key, value in os.environ.items() if not key.startswith("ARENA_")}
        env |= {"ARENA_PORT": str(server.port), "ARENA_TOKEN": "tk"}
        proc = await asyncio.create_subprocess_exec(
            sys.executable, str(ROOT / "sample_bots" / "python_random" / "bot.py"), env=env, cwd=tmp_path,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        )
        try:
            conn = await server.accept(timeout=20)
            await conn.handshake()
            proc.send_signal(signal.SIGTERM)
            assert await conn.expect("bye", timeout=10) == {"type": "bye"}
            output, _ = await asyncio.wait_for(proc.communicate(), 20)
            assert proc.returncode == 0, output.decode()
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
