"""A sealed match (protocol §6): its decks are dealt again by a later match
of its tournament, so no seat learns them from this one. Stepped by hand
with a fake clock, like tests/server/test_session_rules.py."""

from __future__ import annotations

import random
from typing import Any

from arena.games import get_game
from arena.server.session import SessionState
from tests.server.test_session_rules import Harness


def _split(state: dict[str, Any]) -> dict[str, list[str]]:
    cards = list(state["cards"])
    return {"front": cards[:3], "middle": cards[3:8], "back": cards[8:]}


def play_out(h: Harness, *, sealed: bool) -> None:
    """Every seat remote; each answers its open request until the end, then
    the result is 'stored' and match_end goes out."""
    h.session.sealed = sealed
    h.start()
    now = 0.0
    while h.session.state is SessionState.RUNNING:
        now += 0.01
        for seat in range(len(h.seats)):
            request = h.open_request(seat)
            if request is None:
                continue
            action = (_split(request["state"]) if request.get("constraints") is not None
                      else request["legal"][0])
            h.answer(seat, action, now, request)
    assert h.session.state is SessionState.ENDED
    h.session.finish()
    h.drain()


def muushig(sealed: bool) -> Harness:
    engine = get_game("muushig").new_match({"max_hands": 3}, random.Random(5), None)
    h = Harness(engine, remote=5)
    play_out(h, sealed=sealed)
    return h


def thirteen(sealed: bool) -> Harness:
    engine = get_game("thirteen").new_match({"deals": 2}, random.Random(5), None)
    h = Harness(engine, remote=engine.n_seats)
    play_out(h, sealed=sealed)
    return h


def match_end(h: Harness, seat: int) -> dict[str, Any]:
    (end,) = [m for m in h.inbox[seat] if m["type"] == "match_end"]
    return end


def test_a_sealed_match_end_has_the_result_and_no_deck():
    h = muushig(sealed=True)
    for seat in range(5):
        end = match_end(h, seat)
        assert end["reveal"] == [] and end["reveal_deferred"] is True
        assert end["result"] == h.session.result
    # The store still gets every deck, for the deferred reveal and verify.
    assert h.session.reveal and len(h.session.reveal) == len(h.events(0, "commit"))


def test_an_ordinary_match_end_reveals_every_deck():
    h = muushig(sealed=False)
    end = match_end(h, 0)
    assert "reveal_deferred" not in end
    assert end["reveal"] == h.session.reveal and len(end["reveal"]) == len(h.events(0, "commit"))


def test_a_sealed_showdown_shows_a_seat_its_own_rows_and_no_other():
    h = thirteen(sealed=True)
    n = len(h.seats)
    full = [r for r in h.records if r.get("kind") == "showdown"]
    assert len(full) == 2
    for seat in range(n):
        shown = h.events(seat, "showdown")
        assert len(shown) == 2
        for mine, record in zip(shown, full):
            assert mine["sealed"] is True
            assert mine["arrangements"][seat] == record["arrangements"][seat]
            assert all(mine["arrangements"][s] is None for s in range(n) if s != seat)
            assert mine["pairs"][seat] == record["pairs"][seat]
            assert all(mine["pairs"][s] is None for s in range(n) if s != seat)
            assert mine["fouled"][seat] == record["fouled"][seat]
            assert mine["scores"] == record["scores"] and mine["totals"] == record["totals"]
        assert match_end(h, seat)["reveal"] == []
    # Spectators: the scores, no cards.
    h.drain()
    public = [e for e in h.public if e.get("kind") == "showdown"]
    assert public and all(e["arrangements"] == [None] * n and e["pairs"] is None for e in public)


def test_an_ordinary_showdown_shows_every_seat_its_rows():
    h = thirteen(sealed=False)
    full = [r for r in h.records if r.get("kind") == "showdown"]
    assert h.events(1, "showdown") == full
