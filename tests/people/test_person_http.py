"""A person plays a whole match through the HTTP API (no browser), seated
at an ordinary table with house bots; the seat's messages are a bot's in
that seat, and never hold another seat's hidden cards."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from arena.people import PEOPLE
from arena.storage.base import MatchStatus
from arena.storage.sqlite import SqliteStore
from tests.people.helpers import cards_in, people_arena, play_as_person, random_legal, register


def hidden_from(records: list[dict[str, Any]], seat: int) -> dict[tuple[int, int], set[str]]:
    """Per (round, hand) of a Muushig match: the cards other seats held
    (dealt or drawn), from the stored records, less the face-up card."""
    hidden: dict[tuple[int, int], set[str]] = {}
    key = (0, 0)
    for r in records:
        if r["kind"] == "hand_start":
            key = (r["round"], r["hand"])
            hidden[key] = {c for s, cards in enumerate(r["hands"]) if s != seat
                           for c in cards} - {r["face_up"]}
        elif r["kind"] == "exchange" and r["seat"] != seat:
            hidden[key] |= set(r["drawn"])
    return hidden


def assert_no_hidden_cards(seen: list[dict[str, Any]], hidden: dict[tuple[int, int], set[str]]
                           ) -> int:
    """Walk the seat's messages in order: a card another seat holds may show
    only once it is played. Returns how many cards were checked."""
    key = (0, 0)
    played: set[str] = set()
    checked = 0
    for message in seen:
        if message["type"] == "match_end":
            break  # the reveal: every deck, after the match
        event = message.get("event") or {}
        if event.get("kind") == "hand_start":
            key = (event["round"], event["hand"])
            played = set()
        if event.get("kind") == "play":
            played.add(event["card"])
        cards = cards_in(message)
        checked += len(cards)
        leaked = (cards & hidden.get(key, set())) - played
        assert not leaked, f"the person saw {sorted(leaked)} of another seat in {message}"
    return checked


async def test_a_person_plays_a_whole_muushig_match_over_http(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "arena.db")
    try:
        async with people_arena(tmp_path, store) as (arena, base), aiohttp.ClientSession() as http:
            token = await register(http, base, "alice")
            table, seen = await play_as_person(http, base, token, "muushig",
                                               random_legal(random.Random(7)))
            kinds = [m["type"] for m in seen]
            assert kinds[0] == "match_start" and kinds[-1] == "match_end"
            start = seen[0]
            assert start["seat"] == table["seat"] and start["players"][table["seat"]] == "alice"
            # The person's own clock, not the bots' milliseconds.
            assert start["limits"] == {"decision_ms": 20_000, "bank_ms": 20_000}
            assert kinds.count("request") > 5
            record = store.get_match(table["match"])
            assert record.status is MatchStatus.FINISHED
            assert record.tournament_id == PEOPLE
            assert record.latency_ms is not None and record.latency_ms[table["seat"]]
            stored = [e.data for e in store.get_events(table["match"])]
            hidden = hidden_from(stored, table["seat"])
            assert hidden and all(hidden.values())
            assert assert_no_hidden_cards(seen, hidden) > 50
    finally:
        store.close()


def test_the_leak_check_catches_a_leak() -> None:
    """The check above fails when a seat is shown a card another seat holds."""
    hidden = {(1, 1): {"AS"}}
    seen = [{"type": "event", "event": {"kind": "hand_start", "round": 1, "hand": 1,
                                         "cards": ["KS"]}},
            {"type": "request", "state": {"trick": [[2, "AS"]]}}]
    with pytest.raises(AssertionError):
        assert_no_hidden_cards(seen, hidden)
    played = seen[:1] + [{"type": "event", "event": {"kind": "play", "seat": 2, "card": "AS"}}]
    assert assert_no_hidden_cards(played + seen[1:], hidden) == 3
