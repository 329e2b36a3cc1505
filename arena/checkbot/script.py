"""The checker's scripted matches: fixed decks, house plans, and a cursor.

Match A seats the bot at seat 1 and plays two hands of round 0:

* hand 0, dealer 0: the bot speaks first (a ``decide`` request); every house
  seat folds, so a fold ends the hand at once (the dealer takes five tricks)
  and an entry forces the dealer in and plays a two-seat hand;
* hand 1, dealer 1 (the bot): seat 2 enters and the others fold, so the bot
  is forced in (rules §4.4) and is asked ``exchange``, ``take`` and five
  ``play`` requests, whatever it answered before.

Match B seats the bot at seat 3 for one ``decide`` request interleaved with
match A's requests (the multiplexing check), then ends.

Whatever the bot answers, every request is consistent: the checker deals
the decks below and follows the rules (``hand``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Generator

from arena.checkbot.hand import (
    SEATS, Ask, Assessment, HandSetup, HousePlan, Step, Tell, assess_listed, default_action, play_hand,
)

RULES: dict[str, Any] = {
    "max_hands": 200,
    "last_two_forced": False,
    "auto_enter_after_folds": 0,
    "trump_ace_first_lead": False,
    "players": SEATS,
}


def _deck(text: str) -> tuple[str, ...]:
    return tuple(text.split())


# Hand-picked shuffles; ``HandSetup`` checks each holds all 32 cards once.
# DECK_A1 is chosen so that, whatever the bot exchanges and takes, its first
# play of hand 1 has at least two legal cards (the illegal_action check
# rejects a legal answer and expects another legal one).
DECK_A0 = _deck("9C 8D TS 9S JC 8H QH JH AH 7D 8S TD KC QS KD 7H QD QC KH JS JD AD KS AS TH AC 9H 7C 8C TC 9D 7S")
DECK_A1 = _deck("QH QC AS KC 7S 9D 8C JC 8S JS QS KS 7C 7H TC AH 9H TS JH 8H 9S AC KH JD 7D QD KD 8D TD AD TH 9C")
DECK_B0 = _deck("8S 7C KS 9S JC 8H QH TH KD QD QS JS AD 7D TC KH AH QC 7S 8C 7H 9C 9H KC JD AC TD TS JH 8D 9D AS")


@dataclass
class ScriptedMatch:
    """One match's script and how far it has gone.

    ``next_step`` walks the hands; the driver sends every ``Tell`` as an
    ``event`` and turns every ``Ask`` into a ``request`` with a fresh id,
    then calls ``settle`` with the action it applied.
    """

    match_id: str
    seat: int
    players: list[str]
    hands: list[HandSetup]
    decision_ms: int
    scores: list[int] = field(default_factory=lambda: [15] * SEATS)
    stars: list[int] = field(default_factory=lambda: [0] * SEATS)
    next_id: int = 1
    _steps: Generator[Step, Any, None] | None = None
    _reply: Any = None
    finished: bool = False

    def match_start(self) -> dict[str, Any]:
        return {
            "type": "match_start",
            "match": self.match_id,
            "game": "muushig",
            "seat": self.seat,
            "players": list(self.players),
            "rules": dict(RULES),
            "limits": {"decision_ms": self.decision_ms, "bank_ms": 0},
        }

    def _all_hands(self) -> Generator[Step, Any, None]:
        for i, setup in enumerate(self.hands):
            starts_round = i == 0 or self.hands[i - 1].round != setup.round
            yield from play_hand(setup, self.seat, self.scores, self.stars, starts_round=starts_round)

    def next_step(self) -> Step | None:
        """The next thing the bot's seat sees, or None at the end."""
        if self.finished:
            return None
        if self._steps is None:
            self._steps = self._all_hands()
            step = next(self._steps, None)
        else:
            try:
                step = self._steps.send(self._reply)
            except StopIteration:
                step = None
        self._reply = None
        if step is None:
            self.finished = True
        return step

    def settle(self, action: Any) -> None:
        """The action applied for the last ``Ask`` (always a legal one)."""
        self._reply = action

    def assess(self, ask: Ask, action: Any) -> Assessment:
        return assess_listed(ask, action)

    def default(self, ask: Ask) -> Any:
        """The action applied at a deadline (rules §11)."""
        return default_action(ask.phase, ask.legal)

    def take_id(self) -> int:
        self.next_id += 1
        return self.next_id - 1

    def event(self, tell: Tell) -> dict[str, Any]:
        return {"type": "event", "match": self.match_id, "event": tell.event}

    def request(self, ask: Ask, request_id: int, deadline_ms: int) -> dict[str, Any]:
        return {
            "type": "request",
            "match": self.match_id,
            "id": request_id,
            "phase": str(ask.phase),
            "deadline_ms": deadline_ms,
            "legal": ask.legal,
            "state": ask.state,
        }

    def match_end(self) -> dict[str, Any]:
        """The result as it stands (the script stops after its hands)."""
        sums = list(self.scores)
        ranks = [1 + sum(1 for o in range(SEATS) if (-self.stars[o], sums[o]) < (-self.stars[s], sums[s]))
                 for s in range(SEATS)]
        return {
            "type": "match_end",
            "match": self.match_id,
            "result": {
                "stars": list(self.stars),
                "final_scores": [[score] for score in self.scores],
                "sums": sums,
                "ranks": ranks,
            },
            "reveal": [setup.reveal() for setup in self.hands],
        }


def match_a(bot_name: str, decision_ms: int) -> ScriptedMatch:
    return ScriptedMatch(
        match_id="check-a",
        seat=1,
        players=["house-0", bot_name, "house-2", "house-3", "house-4"],
        hands=[
            HandSetup(round=0, hand=0, dealer=0, deck=DECK_A0, salt="c0ffee-a0",
                      plan=HousePlan(discards={0: 2}, take=True)),
            HandSetup(round=0, hand=1, dealer=1, deck=DECK_A1, salt="c0ffee-a1",
                      plan=HousePlan(enter=frozenset({2}), discards={2: 2})),
        ],
        decision_ms=decision_ms,
    )


def match_b(bot_name: str, decision_ms: int, first_id: int, match_id: str = "check-b") -> ScriptedMatch:
    """Starts its ids at ``first_id`` so that match A and B requests share an
    id: a bot that keys requests by id alone answers the wrong one. Other
    short matches (one ``decide`` request) reuse it under another id."""
    return ScriptedMatch(
        match_id=match_id,
        seat=3,
        players=["house-0", "house-1", "house-2", bot_name, "house-4"],
        hands=[HandSetup(round=0, hand=0, dealer=0, deck=DECK_B0, salt="c0ffee-b0", plan=HousePlan())],
        decision_ms=decision_ms,
        next_id=first_id,
    )
