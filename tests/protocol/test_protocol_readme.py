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
    assert types == {"hello", "action", "bye", "welcome", "error", "match_start", "event", "request", "match_end"}
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
