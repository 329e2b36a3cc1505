"""What the audit checks, by name, and the records it works on.

Clause names (one test each), the field lists of the protocol page, a seat's
:class:`Recording` of one match, and :class:`Hand`, what that seat can
track of the hand in play.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from tests.conformance_server import reference as ref

CARD = re.compile(r"^[789TJQKA][HSDC]$")
CARD_IN_TEXT = re.compile(r"(?<![A-Za-z0-9])[789TJQKA][HSDC](?![A-Za-z0-9])")
HEX64 = re.compile(r"^[0-9a-f]{64}$")
VARIANT_NAMES = {"max_hands", "last_two_forced", "auto_enter_after_folds",
                 "trump_ace_first_lead", "players"}
STATE_FIELDS = ("round", "hand", "dealer", "seat", "trump", "face_up", "cards", "scores",
                "stars", "status", "stock", "face_up_taken", "trick", "leader", "tricks", "played")
EVENT_FIELDS: dict[str, set[str]] = {
    "round_start": {"round", "dealer", "scores"},
    "hand_start": {"round", "hand", "dealer", "face_up", "trump", "cards"},
    "commit": {"round", "hand", "commitment"},
    "decision": {"seat", "choice", "forced"},
    "all_folded": {"dealer", "scores"},
    "exchange": {"seat", "count"},  # + drawn for the exchanging seat only
    "take": {"seat", "taken"},
    "play": {"seat", "card"},
    "trick": {"winner", "cards", "scores"},
    "hand_end": {"tricks", "muushig", "scores"},
    "round_end": {"round", "winner", "scores"},
    "timeout": {"seat", "phase"},
    "autopilot": {"seat", "reason"},
}

# Clause names (one test each).
MATCH_START = "match_start"
MATCH_FIELD = "every match message carries match"
EVENT_SHAPE = "event fields"
COMMIT_ORDER = "commit just before hand_start"
REVEAL = "reveal verifies"
DEAL = "revealed decks reproduce what the seat saw"
STRUCTURE = "rounds, hands and dealers"
SCORES = "scores and tricks"
HAND_END = "hand_end after every hand"
PRIVACY = "no hidden cards"
REQUEST_IDS = "request ids unique"
LEGAL = "legal lists and orderings"
STATE = "state is the whole observation"
DEADLINE = "deadline_ms"
FORCED = "forced decisions never requested"
RESULT = "match_end result"
CLEAN = "no errors or timeouts in a clean match"


@dataclass
class Recording:
    label: str
    encoding: str
    bot: str  # the welcome's bot name
    messages: list[dict[str, Any]]  # match_start .. match_end of one match
    answers: dict[int, Any]  # request id -> the action this bot sent
    decision_ms: int
    bank_ms: int


def cards_in(value: Any) -> set[str]:
    found: set[str] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str):
            if CARD.match(item):
                found.add(item)
            elif " " in item:  # prose, e.g. an error message
                found.update(CARD_IN_TEXT.findall(item))
    return found


@dataclass
class Hand:
    round: int
    hand: int
    dealer: int
    face_up: str
    trump: str
    dealt: list[str]
    own: set[str]
    known: set[str]
    status: list[str] = field(default_factory=lambda: ["waiting"] * ref.SEATS)
    stock: int = 6
    drawn_offset: int = 0
    draws: list[tuple[int, list[str]]] = field(default_factory=list)  # own (offset, drawn)
    face_up_taken: bool = False
    trick: list[list[Any]] = field(default_factory=list)
    leader: int | None = None
    next_leader: int | None = None
    tricks: list[int] = field(default_factory=lambda: [0] * ref.SEATS)
    played: list[dict[str, Any]] = field(default_factory=list)
    asked_decide: bool = False
    all_folded: bool = False
    tricks_done: int = 0
    ended: bool = False
