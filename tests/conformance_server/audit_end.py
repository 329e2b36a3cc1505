"""The audit's checks of requests (§3) and of ``match_end`` (§5, §6).

A mixin of :class:`~tests.conformance_server.audit.Auditor`: it reads the
tracker the auditor keeps while walking a seat's messages.
"""

from __future__ import annotations

from typing import Any

from tests.conformance_server import reference as ref
from tests.conformance_server.clauses import (DEAL, DEADLINE, FORCED, LEGAL, REQUEST_IDS, RESULT,
                                              REVEAL, STATE, STATE_FIELDS, STRUCTURE, Hand)


class RequestAndEndChecks:
    seat: int
    scores: list[int]
    stars: list[int]
    request_ids: set[int]
    last_request: dict[str, Any] | None
    round_ends: list[dict[str, Any]]
    commits: dict[tuple[int, int], str]
    hands: dict[tuple[int, int], Hand]
    rec: Any

    def fail(self, clause: str, text: str) -> None:
        raise NotImplementedError

    def _need_hand(self, kind: str) -> Hand:
        raise NotImplementedError

    def _order(self, dealer: int) -> list[int]:
        return [(dealer + 1 + i) % ref.SEATS for i in range(ref.SEATS)]

    # -- requests ------------------------------------------------------------------
    def _request(self, m: dict[str, Any]) -> None:
        missing = {"id", "phase", "deadline_ms", "legal", "state"} - set(m)
        if missing:
            self.fail(STATE, f"request without {sorted(missing)}")
            return
        self.last_request = m
        rid, phase, legal, state = m["id"], m["phase"], m["legal"], m["state"]
        if not isinstance(rid, int) or rid in self.request_ids:
            self.fail(REQUEST_IDS, f"request id {rid!r} repeated or not an integer")
        self.request_ids.add(rid)
        budget = self.rec.decision_ms + self.rec.bank_ms
        if not isinstance(m["deadline_ms"], int) or not budget - 20 <= m["deadline_ms"] <= budget:
            self.fail(DEADLINE, f"deadline_ms {m['deadline_ms']}, expected {budget}")
        hand = self._need_hand("request")
        self._check_state(state, hand, phase)
        if phase == "decide":
            hand.asked_decide = True
            expected_seat = self._order(hand.dealer)[sum(s != "waiting" for s in hand.status)]
            entered = sum(1 for s in range(ref.SEATS)
                          if s != hand.dealer and hand.status[s] == "entered")
            if self.seat != expected_seat:
                self.fail(STRUCTURE, f"decide request out of turn (seat {expected_seat} is next)")
            if self.seat == hand.dealer and entered <= 1:
                self.fail(FORCED, f"the dealer was asked with {entered} seat(s) entered")
            expected_legal: list[Any] = ["enter", "fold"]
        elif phase == "exchange":
            if hand.stock <= 0 or hand.status[self.seat] != "entered":
                self.fail(STRUCTURE, f"exchange request with stock {hand.stock}, "
                                     f"status {hand.status[self.seat]}")
            expected_legal = ref.exchange_sets(sorted(hand.own), hand.stock)
        elif phase == "take":
            if self.seat != hand.dealer or hand.status[self.seat] != "entered":
                self.fail(STRUCTURE, "take request to a seat that is not the entered dealer")
            expected_legal = ref.take_answers(sorted(hand.own))
        elif phase == "play":
            expected_legal = ref.playable(sorted(hand.own), hand.trick, hand.trump)
        else:
            self.fail(LEGAL, f"unknown phase {phase!r}")
            return
        if legal != expected_legal:
            self.fail(LEGAL, f"{phase} legal {legal!r:.300}, expected {expected_legal!r:.300}")

    def _check_state(self, state: Any, hand: Hand, phase: str) -> None:
        if not isinstance(state, dict):
            self.fail(STATE, f"state {state!r:.80} is not a map")
            return
        missing = [name for name in STATE_FIELDS if name not in state]
        if missing:
            self.fail(STATE, f"state lacks {missing}")
        expected = {
            "round": hand.round, "hand": hand.hand, "dealer": hand.dealer, "seat": self.seat,
            "trump": hand.trump, "face_up": hand.face_up, "scores": self.scores,
            "stars": self.stars, "status": hand.status, "stock": hand.stock,
            "face_up_taken": hand.face_up_taken, "trick": hand.trick, "tricks": hand.tricks,
            "played": hand.played,
        }
        for name, value in expected.items():
            if name in state and state[name] != value:
                self.fail(STATE, f"state.{name} {state[name]!r:.200}, expected {value!r:.200}")
        if "cards" in state and sorted(state["cards"]) != sorted(hand.own):
            self.fail(STATE, f"state.cards {state['cards']}, own hand {sorted(hand.own)}")
        if "leader" in state:
            # The seat leading the current trick; null before the tricks begin.
            leader: int | None = None
            if phase == "play":
                entered = [x for x in self._order(hand.dealer) if hand.status[x] == "entered"]
                leader = (hand.trick[0][0] if hand.trick else
                          hand.next_leader if hand.next_leader is not None else entered[0])
            if state["leader"] != leader:
                self.fail(STATE, f"state.leader {state['leader']} in {phase}, expected {leader}")

    # -- end -------------------------------------------------------------------------
    def _match_end(self, m: dict[str, Any]) -> None:
        result, reveal = m.get("result"), m.get("reveal")
        if not isinstance(result, dict) or not isinstance(reveal, list):
            self.fail(RESULT, f"match_end without result/reveal: {sorted(m)}")
            return
        if len(self.round_ends) != 5:
            self.fail(STRUCTURE, f"{len(self.round_ends)} rounds, expected 5")
        final = [[e["scores"][s] for e in self.round_ends] for s in range(ref.SEATS)]
        sums = [sum(row) for row in final]
        expected = {"stars": self.stars, "final_scores": final, "sums": sums,
                    "ranks": ref.sport_ranks(self.stars, sums)}
        for name, value in expected.items():
            if result.get(name) != value:
                self.fail(RESULT, f"result.{name} {result.get(name)}, expected {value}")
        self._reveal(reveal)

    def _reveal(self, reveal: list[Any]) -> None:
        seen: set[tuple[int, int]] = set()
        for entry in reveal:
            if not isinstance(entry, dict) or set(entry) < {"round", "hand", "salt", "deck"}:
                self.fail(REVEAL, f"reveal entry {entry!r:.100}")
                continue
            key = (entry["round"], entry["hand"])
            seen.add(key)
            deck, salt = entry["deck"], entry["salt"]
            if sorted(deck) != sorted(ref.DECK) or not isinstance(salt, str) or not salt:
                self.fail(REVEAL, f"reveal {key}: not a 32-card deck with a salt")
                continue
            if self.commits.get(key) != ref.commitment(salt, deck):
                self.fail(REVEAL, f"reveal {key} does not match its commitment")
            hand = self.hands.get(key)
            if hand is None:
                continue
            if set(ref.dealt_to(deck, hand.dealer, self.seat)) != set(hand.dealt):
                self.fail(DEAL, f"{key}: deck deals {ref.dealt_to(deck, hand.dealer, self.seat)} "
                                f"to seat {self.seat}, hand_start had {hand.dealt}")
            if deck[25] != hand.face_up:
                self.fail(DEAL, f"{key}: deck[25] is {deck[25]}, face_up was {hand.face_up}")
            for offset, drawn in hand.draws:
                stock = deck[26 + offset: 26 + offset + len(drawn)]
                if sorted(stock) != sorted(drawn):
                    self.fail(DEAL, f"{key}: drew {drawn}, the stock held {stock} at {offset}")
        if seen != set(self.commits):
            self.fail(REVEAL, f"revealed {sorted(seen)} but committed {sorted(self.commits)}")
