"""A bot that comes back mid-hand can still verify that hand: after
``match_start`` it gets the current deal's ``commit`` again, before the
pending request (fake clock, no sockets)."""

from __future__ import annotations

import random

import pytest

from arena.games import get_game
from protocol.codec import Encoding

from .test_session_rules import Harness

JSONL = Encoding.JSONL


def engine_of(game: str):
    rules = {"max_hands": 2} if game == "muushig" else {"deals": 2}
    return get_game(game).new_match(rules, random.Random(5), None)


def harness(game: str) -> Harness:
    """One remote seat; the others played by the game's own house bot."""
    engine = engine_of(game)
    h = Harness(engine, decision_ms=1000, grace=5.0)
    spec = get_game(game)
    factory = spec.house_bots[spec.default_house_bot]
    for seat in h.seats[1:]:
        try:
            seat.house = factory(random.Random(seat.index), engine.rules)
        except TypeError:  # a factory that takes no rules
            seat.house = factory(random.Random(seat.index))
    return h


@pytest.mark.parametrize("game", ["muushig", "thirteen"])
def test_a_returning_bot_gets_the_current_deals_commit_again(game: str) -> None:
    h = harness(game)
    h.start()
    commits = h.events(0, "commit")
    assert commits, "the deal was committed before the first request"
    current = commits[-1]
    h.session.disconnect(0, 0.25)
    h.drain()
    h.inbox[0].clear()
    assert h.session.reconnect(0, JSONL, 1.0)
    h.drain()
    kinds = [m["type"] if m["type"] != "event" else m["event"]["kind"] for m in h.inbox[0]]
    assert kinds[0] == "match_start"
    assert h.events(0, "commit") == [current]
    assert kinds.index("commit") < kinds.index("request")
    assert h.inbox[0][kinds.index("commit")]["match"] == "m1"


def test_the_resent_commit_matches_the_reveal() -> None:
    from protocol.deals import commitment

    h = harness("muushig")
    h.start()
    h.session.disconnect(0, 0.1)
    h.drain()
    h.inbox[0].clear()
    h.session.reconnect(0, JSONL, 0.2)
    h.houses(0.2)
    resent = h.events(0, "commit")[0]
    now = 0.3
    for _ in range(2000):
        if h.session.over:
            break
        request = h.open_request(0)
        if request is not None:
            h.answer(0, request["legal"][0], now, request)
        else:
            h.houses(now)
        now += 0.001
    assert h.session.over
    h.session.finish()  # the driver stored the result
    h.drain()
    end = [m for m in h.inbox[0] if m["type"] == "match_end"][0]
    label = {k: v for k, v in resent.items() if k not in ("kind", "commitment")}
    deal = next(d for d in end["reveal"] if all(d.get(k) == v for k, v in label.items()))
    assert commitment(deal["salt"], deal["deck"]) == resent["commitment"]
