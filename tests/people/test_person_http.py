"""A person plays a whole match through the HTTP API (no browser), seated
at an ordinary table with house bots; the seat's messages are a bot's in
that seat, and never hold another seat's hidden cards."""

from __future__ import annotations

import random
from pathlib import Path
import pytest

from arena.people import PEOPLE
from arena.storage.base import MatchStatus
from tests.people.helpers import (assert_no_hidden_cards, hidden_cards, people_site,
                                  play_as_person, random_legal)


@pytest.mark.parametrize("game", ["muushig", "thirteen"])
async def test_a_person_plays_a_whole_match_over_http(tmp_path: Path, game: str) -> None:
    async with people_site(tmp_path) as site:
        store, base, http = site.store, site.base, site.http
        token = await site.person("alice")
        table, seen = await play_as_person(http, base, token, game,
                                           random_legal(random.Random(7)))
        kinds = [m["type"] for m in seen]
        assert kinds[0] == "match_start" and kinds[-1] == "match_end"
        start = seen[0]
        assert start["seat"] == table["seat"] and start["players"][table["seat"]] == "alice"
        # The person's own clock, not the bots' milliseconds.
        assert start["limits"] == {"decision_ms": 20_000, "bank_ms": 20_000}
        assert kinds.count("request") >= (10 if game == "thirteen" else 5)
        record = store.get_match(table["match"])
        assert record.status is MatchStatus.FINISHED
        assert record.tournament_id == PEOPLE
        assert record.latency_ms is not None and record.latency_ms[table["seat"]]
        stored = [e.data for e in store.get_events(table["match"])]
        hidden = hidden_cards(stored, table["seat"])
        assert hidden and all(hidden.values())
        assert assert_no_hidden_cards(seen, hidden) > 100


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
