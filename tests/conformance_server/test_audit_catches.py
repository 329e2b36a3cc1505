"""The auditor itself: each clause check fails on a view broken on purpose.

Without this, a clean audit could just mean a blind auditor.
"""

from __future__ import annotations

import copy
from typing import Any, Callable

import pytest

from tests.conformance_server import audit as a
from tests.conformance_server import clauses as c
from tests.conformance_server.clauses import Recording


def first(rec: Recording, pred: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    return next(m for m in rec.messages if pred(m))


def event(kind: str, **fields: Any) -> Callable[[dict[str, Any]], bool]:
    return lambda m: (m["type"] == "event" and m["event"]["kind"] == kind
                      and all(m["event"].get(k) == v for k, v in fields.items()))


def request(phase: str, min_legal: int = 1) -> Callable[[dict[str, Any]], bool]:
    return lambda m: m["type"] == "request" and m["phase"] == phase and len(m["legal"]) >= min_legal


def other_seat_exchange(rec: Recording) -> dict[str, Any]:
    seat = rec.messages[0]["seat"]
    return first(rec, lambda m: event("exchange")(m) and m["event"]["seat"] != seat)["event"]


def hidden_card(rec: Recording) -> str:
    """A card another seat was dealt in the first hand (from the reveal)."""
    start = first(rec, event("hand_start"))["event"]
    deck = rec.messages[-1]["reveal"][0]["deck"]
    return next(c for c in deck[:25] if c not in start["cards"])


def swap_first_two(values: list[Any]) -> None:
    values[0], values[1] = values[1], values[0]


MUTATIONS: dict[str, tuple[str, Callable[[Recording], None]]] = {
    "match_start field missing": (c.MATCH_START, lambda r: r.messages[0].pop("limits")),
    "wrong match id": (c.MATCH_FIELD, lambda r: r.messages[5].update(match="other")),
    "discards shown": (c.EVENT_SHAPE, lambda r: other_seat_exchange(r).update(discards=[])),
    "drawn shown to others": (c.EVENT_SHAPE, lambda r: other_seat_exchange(r).update(drawn=[])),
    "commit after hand_start": (c.COMMIT_ORDER, lambda r: r.messages.remove(
        first(r, event("commit", round=0, hand=1)))),
    "bad salt": (c.REVEAL, lambda r: r.messages[-1]["reveal"][0].update(salt="x")),
    "trump not face_up suit": (c.EVENT_SHAPE, lambda r: first(r, event("hand_start"))["event"]
                               .update(trump="Z")),
    "dealer wrong": (c.STRUCTURE, lambda r: first(r, event("round_start", round=1))["event"]
                     .update(dealer=0)),
    "trick score wrong": (c.SCORES, lambda r: first(r, event("trick"))["event"]["scores"]
                          .__setitem__(0, 99)),
    "hand_end missing muushig": (c.HAND_END, lambda r: first(
        r, lambda m: event("hand_end")(m) and m["event"]["muushig"])["event"].update(muushig=[])),
    "foreign card shown": (c.PRIVACY, lambda r: first(r, event("hand_start"))["event"]["cards"]
                           .__setitem__(0, hidden_card(r))),
    "repeated id": (c.REQUEST_IDS, lambda r: first(r, lambda m: m["type"] == "request"
                                                 and m["id"] > 1).update(id=1)),
    "exchange sets unordered": (c.LEGAL, lambda r: swap_first_two(
        first(r, request("exchange", 3))["legal"])),
    "take null not first": (c.LEGAL, lambda r: swap_first_two(first(r, request("take"))["legal"])),
    "play legal incomplete": (c.LEGAL, lambda r: first(r, request("play", 2))["legal"].pop()),
    "state without stock": (c.STATE, lambda r: first(r, request("play"))["state"].pop("stock")),
    "state wrong leader": (c.STATE, lambda r: first(r, request("play"))["state"]
                           .update(leader=None)),
    "deadline short": (c.DEADLINE, lambda r: first(r, request("play")).update(deadline_ms=10)),
    "forced flag wrong": (c.FORCED, lambda r: first(r, event("decision"))["event"]
                          .update(forced=True)),
    "ranks wrong": (c.RESULT, lambda r: r.messages[-1]["result"]["ranks"].reverse()),
    "error seen": (c.CLEAN, lambda r: r.messages.insert(
        3, {"type": "error", "match": r.messages[0]["match"], "code": "late", "message": "x"})),
}


@pytest.mark.parametrize("name", MUTATIONS)
def test_the_audit_catches(recordings, name):
    clause, mutate = MUTATIONS[name]
    rec = copy.deepcopy(next(r for r in recordings if r.label == "lobby/msgpack"))
    assert a.audit(rec).problems.get(clause, []) == []
    mutate(rec)
    assert a.audit(rec).problems.get(clause), f"{name} went unnoticed"
