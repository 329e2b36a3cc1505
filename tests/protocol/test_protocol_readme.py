"""The protocol README's examples are real: JSON and msgpack bytes agree,
and the deal-check snippet works on the worked example."""

from __future__ import annotations

import json
import re
from pathlib import Path

from protocol import commitment, decode_one, encode, parse_bot_message, parse_server_message
from protocol.errors import MessageError

README = (Path(__file__).resolve().parents[2] / "protocol" / "README.md").read_text()


def examples() -> list[tuple[dict, bytes]]:
    """Each JSON example followed by its msgpack frame in hex."""
    pattern = re.compile(r"```json\n(.*?)\n```.*?msgpack frame \((\d+) bytes\).*?```\n(.*?)\n```", re.S)
    found = []
    for text, size, hexdump in pattern.findall(README):
        frame = bytes.fromhex(hexdump.replace("\n", " "))
        assert len(frame) == int(size)
        found.append((json.loads(text), frame))
    return found


def test_every_message_type_has_an_example_in_both_encodings():
    pairs = examples()
    types = {message["type"] for message, _ in pairs}
    assert types == {"hello", "action", "bye", "welcome", "error", "match_start", "event", "request", "match_end",
                     "reveal", "move"}
    for message, frame in pairs:
        assert decode_one(frame, "msgpack") == message
        assert frame == encode(message, "msgpack")


def test_every_example_is_a_valid_message():
    for message, _ in examples():
        try:
            parse_bot_message(message)
        except MessageError:
            parse_server_message(message)


def test_the_deal_check_snippet_runs_on_the_worked_example():
    salt = re.search(r"With salt `([0-9a-f]+)`", README).group(1)
    deck = re.search(r"and the deck\n\n```\n(.*?)\n```", README).group(1).split(",")
    digest = re.search(r"the commitment is\n\n```\n([0-9a-f]{64})\n```", README).group(1)
    assert commitment(salt, deck) == digest
    snippet = re.search(r"```python\n(import hashlib.*?)```", README, re.S).group(1)
    assert len(snippet.strip().splitlines()) == 5
    commits = [{"kind": "commit", "round": 0, "hand": 0, "commitment": digest}]
    exec(snippet, {"commits": commits, "reveal": [{"round": 0, "hand": 0, "salt": salt, "deck": deck}]})
    tampered = [{"round": 0, "hand": 0, "salt": salt, "deck": deck[::-1]}]
    try:
        exec(snippet, {"commits": commits, "reveal": tampered})
    except AssertionError as exc:
        assert "0/0 was changed" in str(exc)
    else:
        raise AssertionError("the snippet accepted a changed deck")


# --- §8, the thirteen-card game: its examples are one real match ---------

THIRTEEN = README.split("## 8. The thirteen-card game", 1)[1].split("\n## ", 1)[0]


def thirteen_examples() -> list[dict]:
    return [json.loads(text) for text in re.findall(r"```json\n(.*?)\n```", THIRTEEN, re.S)]


def thirteen_example(kind: str, index: int = 0) -> dict:
    """The ``index``-th example whose type (or event kind) is ``kind``."""
    found = [m for m in thirteen_examples() if m["type"] == kind or m.get("event", {}).get("kind") == kind]
    return found[index]


def test_every_thirteen_example_has_its_msgpack_frame():
    pattern = re.compile(r"```json\n(.*?)\n```\n\n(?:<details><summary>)?msgpack frame \((\d+) bytes\)"
                         r"(?::|</summary>)\n\n```\n(.*?)\n```", re.S)
    pairs = pattern.findall(THIRTEEN)
    assert len(pairs) == len(thirteen_examples()) == 11
    for text, size, hexdump in pairs:
        frame = bytes.fromhex(hexdump.replace("\n", " "))
        assert len(frame) == int(size) and frame == encode(json.loads(text), "msgpack")


def test_the_thirteen_hello_and_match_start_name_the_game_and_every_flag():
    from arena.games.thirteen.rules import ThirteenRules

    assert thirteen_example("hello")["game"] == "thirteen"
    start = thirteen_example("match_start")
    assert start["game"] == "thirteen"
    assert set(start["rules"]) == set(ThirteenRules.__dataclass_fields__)
    assert ThirteenRules.from_dict(start["rules"]).as_dict() == start["rules"]


def test_the_thirteen_examples_are_what_the_engine_plays():
    from arena.games.base import IllegalActionError
    from arena.games.thirteen import ThirteenEngine

    start, end = thirteen_example("match_start"), thirteen_example("match_end")
    deck = end["reveal"][0]["deck"]
    seat = start["seat"]
    engine = ThirteenEngine(start["rules"], None, [deck])
    engine.start()
    request = thirteen_example("request")
    assert "legal" not in request and request["constraints"] == {"front": 3, "middle": 5, "back": 5}
    assert request["state"] == {k: engine.observation(seat)[k] for k in request["state"]}
    assert thirteen_example("deal_start")["event"]["cards"] == request["state"]["cards"]
    good, bad, error = thirteen_example("action", 0), thirteen_example("action", 1), thirteen_example("error")
    try:
        engine.check_for(seat, bad["action"])
    except IllegalActionError as exc:
        assert str(exc) == error["message"] and error["match"] == bad["match"] and error["id"] == bad["id"]
    else:
        raise AssertionError("the example's bad arrangement was accepted")
    showdown = thirteen_example("showdown")["event"]
    assert good["action"] == showdown["arrangements"][seat]
    events = []
    for s, arrangement in enumerate(showdown["arrangements"]):
        events += engine.play_for(s, arrangement)
    assert [e.for_seat(seat) for e in events if e.kind == "showdown"] == [showdown]
    assert showdown["fouled"][0] and end["result"] == engine.result()


def test_the_thirteen_deal_check_snippet_runs_on_the_examples():
    commit, end = thirteen_example("commit")["event"], thirteen_example("match_end")
    reveal = end["reveal"]
    assert commitment(reveal[0]["salt"], reveal[0]["deck"]) == commit["commitment"]
    snippet = re.search(r"```python\n(import hashlib.*?)```", THIRTEEN, re.S).group(1)
    exec(snippet, {"commits": [commit], "reveal": reveal})
    tampered = [{**reveal[0], "deck": reveal[0]["deck"][::-1]}]
    try:
        exec(snippet, {"commits": [commit], "reveal": tampered})
    except AssertionError as exc:
        assert "deal 0 was changed" in str(exc)
    else:
        raise AssertionError("the snippet accepted a changed deck")
