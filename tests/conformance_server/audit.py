"""Audit one seat's view of one match against the protocol page.

A :class:`Recording` is everything one bot saw of a match (``match_start``
to ``match_end``) and what it answered. :func:`audit` replays it with a
tracker built from the rules page (scores, hands, tricks) and files every
disagreement under the clause it breaks, so each test can check one clause.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from tests.conformance_server import reference as ref
from tests.conformance_server.audit_end import RequestAndEndChecks
from tests.conformance_server.clauses import (CLEAN, COMMIT_ORDER, EVENT_FIELDS, EVENT_SHAPE,
                                              FORCED, HAND_END, HEX64, MATCH_FIELD, MATCH_START,
                                              PRIVACY, RESULT, REVEAL, SCORES, STRUCTURE,
                                              VARIANT_NAMES, Hand, Recording, cards_in)

class Auditor(RequestAndEndChecks):
    def __init__(self, rec: Recording) -> None:
        self.rec = rec
        self.problems: dict[str, list[str]] = defaultdict(list)
        self.seat = -1
        self.match = ""
        self.rules: dict[str, Any] = {}
        self.round = -1
        self.next_hand = 0
        self.scores = [ref.START_SCORE] * ref.SEATS
        self.stars = [0] * ref.SEATS
        self.round_over = False
        self.hand: Hand | None = None
        self.hands: dict[tuple[int, int], Hand] = {}
        self.commits: dict[tuple[int, int], str] = {}
        self.pending_commit: tuple[int, int] | None = None
        self.request_ids: set[int] = set()
        self.last_request: dict[str, Any] | None = None
        self.round_ends: list[dict[str, Any]] = []
        self.hands_in_round = 0

    def fail(self, clause: str, text: str) -> None:
        self.problems[clause].append(text)

    # -- walk ------------------------------------------------------------------
    def run(self) -> "Auditor":
        messages = self.rec.messages
        self._match_start(messages[0])
        for index, message in enumerate(messages[1:], 1):
            if message.get("match") != self.match:
                self.fail(MATCH_FIELD, f"message {index} ({message['type']}) has match "
                                       f"{message.get('match')!r}, not {self.match!r}")
            if self.pending_commit is not None:
                event = message.get("event") or {}
                if (message["type"] != "event" or event.get("kind") != "hand_start"
                        or (event.get("round"), event.get("hand")) != self.pending_commit):
                    self.fail(COMMIT_ORDER, f"commit {self.pending_commit} followed by "
                                            f"{message['type']} {event.get('kind')}")
                self.pending_commit = None
            self._privacy(message)
            kind = message["type"]
            if kind == "event":
                self._event(message["event"])
            elif kind == "request":
                self._request(message)
            elif kind == "match_end":
                self._match_end(message)
                if index != len(messages) - 1:
                    self.fail(MATCH_FIELD, "messages after match_end")
            elif kind == "error":
                self.fail(CLEAN, f"error {message}")
            else:
                self.fail(MATCH_FIELD, f"unexpected message type {kind!r} during a match")
        if messages[-1]["type"] != "match_end":
            self.fail(RESULT, "the recording does not end with match_end")
        return self

    def _match_start(self, m: dict[str, Any]) -> None:
        if m.get("type") != "match_start":
            self.fail(MATCH_START, f"first match message is {m.get('type')!r}")
            return
        missing = {"match", "game", "seat", "players", "rules", "limits"} - set(m)
        if missing:
            self.fail(MATCH_START, f"missing {sorted(missing)}")
        self.match = m.get("match", "")
        self.seat = m.get("seat", -1)
        self.rules = m.get("rules", {})
        if not isinstance(self.match, str) or not self.match:
            self.fail(MATCH_START, f"match id {self.match!r}")
        if m.get("game") != "muushig":
            self.fail(MATCH_START, f"game {m.get('game')!r}")
        if self.seat not in range(ref.SEATS):
            self.fail(MATCH_START, f"seat {self.seat!r}")
        players = m.get("players")
        if (not isinstance(players, list) or len(players) != ref.SEATS
                or not all(isinstance(p, str) for p in players)):
            self.fail(MATCH_START, f"players {players!r}")
        elif players[self.seat] != self.rec.bot:
            self.fail(MATCH_START, f"players[{self.seat}] is {players[self.seat]!r}, "
                                   f"not the welcome's {self.rec.bot!r}")
        if not isinstance(self.rules, dict) or not isinstance(self.rules.get("max_hands"), int):
            self.fail(MATCH_START, f"rules without an integer max_hands: {self.rules!r}")
        elif set(self.rules) - VARIANT_NAMES:
            self.fail(MATCH_START, f"rule names not on the rules page: "
                                   f"{sorted(set(self.rules) - VARIANT_NAMES)}")
        if m.get("limits") != {"decision_ms": self.rec.decision_ms, "bank_ms": self.rec.bank_ms}:
            self.fail(MATCH_START, f"limits {m.get('limits')!r}")

    def _privacy(self, message: dict[str, Any]) -> None:
        if self.hand is None or self.hand.ended or message["type"] == "match_end":
            return
        extra: set[str] = set()
        if message["type"] == "event" and message["event"].get("kind") == "exchange":
            extra = set(message["event"].get("drawn") or []) if \
                message["event"].get("seat") == self.seat else set()
        if message["type"] == "event" and message["event"].get("kind") == "play":
            extra = {message["event"].get("card")}
        if message["type"] == "error":
            extra = cards_in(self.rec.answers.get(message.get("id"), []))
        leaked = cards_in(message) - self.hand.known - extra
        if leaked:
            self.fail(PRIVACY, f"{message['type']} {message.get('event', {}).get('kind', '')} "
                               f"shows cards this seat may not see: {sorted(leaked)}")

    # -- events ----------------------------------------------------------------
    def _event(self, e: dict[str, Any]) -> None:
        kind = e.get("kind")
        expected = EVENT_FIELDS.get(kind)  # type: ignore[arg-type]
        if expected is None:
            self.fail(EVENT_SHAPE, f"unknown event kind {kind!r}")
            return
        fields = set(e) - {"kind"}
        if kind == "exchange" and e.get("seat") == self.seat:
            expected = expected | {"drawn"}
        if fields != expected:
            self.fail(EVENT_SHAPE, f"{kind} has fields {sorted(fields)}, expected {sorted(expected)}")
        handler = getattr(self, f"_on_{kind}")
        handler(e)

    def _set_scores(self, scores: Any, expected: list[int], what: str) -> None:
        if scores != expected:
            self.fail(SCORES, f"{what}: scores {scores}, expected {expected}")
        self.scores = list(expected)
        if min(self.scores) <= 0:
            self.round_over = True

    def _on_round_start(self, e: dict[str, Any]) -> None:
        self.round += 1
        self.next_hand = 0
        self.round_over = False
        self.hands_in_round = 0
        if e.get("round") != self.round or e.get("dealer") != self.round:
            self.fail(STRUCTURE, f"round_start {e}, expected round {self.round} dealer {self.round}")
        self._set_scores(e.get("scores"), [ref.START_SCORE] * ref.SEATS, "round_start")

    def _on_commit(self, e: dict[str, Any]) -> None:
        key = (e.get("round"), e.get("hand"))
        if key != (self.round, self.next_hand):
            self.fail(STRUCTURE, f"commit for {key}, expected {(self.round, self.next_hand)}")
        if key in self.commits:
            self.fail(COMMIT_ORDER, f"second commit for {key}")
        if self.hand is not None and not self.hand.ended:
            self.fail(HAND_END, f"commit {key} before hand_end of {self.hand.round, self.hand.hand}")
        commitment = e.get("commitment")
        if not isinstance(commitment, str) or not HEX64.match(commitment):
            self.fail(REVEAL, f"commitment {commitment!r} is not lowercase hex SHA-256")
        self.commits[key] = commitment  # type: ignore[index]
        self.pending_commit = key  # type: ignore[assignment]

    def _on_hand_start(self, e: dict[str, Any]) -> None:
        r, h = e.get("round"), e.get("hand")
        if (r, h) not in self.commits:
            self.fail(COMMIT_ORDER, f"hand_start {(r, h)} without a commit")
        dealer = (self.round + self.next_hand) % ref.SEATS
        if (r, h, e.get("dealer")) != (self.round, self.next_hand, dealer):
            self.fail(STRUCTURE, f"hand_start round {r} hand {h} dealer {e.get('dealer')}, "
                                 f"expected {self.round} {self.next_hand} {dealer}")
        cards, face_up = e.get("cards") or [], e.get("face_up")
        if (len(cards) != 5 or len(set(cards)) != 5 or not all(c in ref.CANONICAL for c in cards)
                or face_up not in ref.CANONICAL or face_up in cards):
            self.fail(PRIVACY, f"hand_start cards {cards} face_up {face_up}: not own 5 cards")
        if not isinstance(face_up, str) or e.get("trump") != face_up[1:]:
            self.fail(EVENT_SHAPE, f"trump {e.get('trump')!r} is not the suit of {face_up!r}")
        self.hand = Hand(round=self.round, hand=self.next_hand, dealer=dealer,
                          face_up=str(face_up), trump=str(face_up)[1:], dealt=list(cards),
                          own=set(cards), known=set(cards) | {str(face_up)})
        self.hands[(self.round, self.next_hand)] = self.hand
        self.next_hand += 1
        self.hands_in_round += 1

    def _on_decision(self, e: dict[str, Any]) -> None:
        hand = self._need_hand("decision")
        seat, choice, forced = e.get("seat"), e.get("choice"), e.get("forced")
        expected_seat = self._order(hand.dealer)[sum(s != "waiting" for s in hand.status)]
        if seat != expected_seat:
            self.fail(STRUCTURE, f"decision of seat {seat}, expected seat {expected_seat}")
        if choice not in ("enter", "fold") or not isinstance(forced, bool):
            self.fail(EVENT_SHAPE, f"decision {e}")
        entered = sum(1 for s in range(ref.SEATS) if s != hand.dealer and hand.status[s] == "entered")
        must = seat == hand.dealer and entered == 1
        if forced != must:
            self.fail(FORCED, f"decision {e}: forced should be {must}")
        if must and choice != "enter":
            self.fail(FORCED, f"forced decision {e} is not enter")
        if seat == self.seat and forced == hand.asked_decide:
            self.fail(FORCED, f"own decision forced={forced} but asked={hand.asked_decide}")
        if seat in range(ref.SEATS):
            hand.status[seat] = "entered" if choice == "enter" else "folded"  # type: ignore[index]

    def _on_all_folded(self, e: dict[str, Any]) -> None:
        hand = self._need_hand("all_folded")
        others = [hand.status[s] for s in range(ref.SEATS) if s != hand.dealer]
        if e.get("dealer") != hand.dealer or others != ["folded"] * 4:
            self.fail(STRUCTURE, f"all_folded {e} with status {hand.status}")
        if hand.status[hand.dealer] != "waiting":
            self.fail(FORCED, "the dealer was asked or announced before all_folded")
        hand.all_folded = True
        hand.tricks[hand.dealer] = 5
        expected = list(self.scores)
        expected[hand.dealer] -= 5
        self._set_scores(e.get("scores"), expected, "all_folded")

    def _on_exchange(self, e: dict[str, Any]) -> None:
        hand = self._need_hand("exchange")
        seat, count = e.get("seat"), e.get("count")
        if not isinstance(count, int) or not 0 <= count <= min(5, hand.stock):
            self.fail(STRUCTURE, f"exchange {e} with {hand.stock} cards in the stock")
            count = 0
        if seat not in range(ref.SEATS) or hand.status[seat] != "entered":  # type: ignore[index]
            self.fail(STRUCTURE, f"exchange by seat {seat}, which has not entered")
        if seat == self.seat:
            drawn = e.get("drawn")
            if not isinstance(drawn, list) or len(drawn) != count:
                self.fail(EVENT_SHAPE, f"own exchange {e}: drawn must list the {count} cards")
                drawn = []
            discards = self._answer_to("exchange", list)
            if discards is None or len(discards) != count:
                discards = []  # defaulted (rules §11: discard nothing)
            hand.own = (hand.own - set(discards)) | set(drawn)
            hand.known |= set(drawn)
            hand.draws.append((hand.drawn_offset, list(drawn)))
        hand.drawn_offset += count
        hand.stock -= count

    def _on_take(self, e: dict[str, Any]) -> None:
        hand = self._need_hand("take")
        if e.get("seat") != hand.dealer or hand.status[hand.dealer] != "entered":
            self.fail(STRUCTURE, f"take {e}: only an entered dealer takes")
        hand.face_up_taken = bool(e.get("taken"))
        if e.get("seat") == self.seat and hand.face_up_taken:
            given = self._answer_to("take", str)
            hand.own = (hand.own - {given}) | {hand.face_up}

    def _on_play(self, e: dict[str, Any]) -> None:
        hand = self._need_hand("play")
        seat, card = e.get("seat"), e.get("card")
        if self.round_over:
            self.fail(SCORES, f"play {e} after a score reached 0: the round should have ended")
        entered = [s for s in self._order(hand.dealer) if hand.status[s] == "entered"]
        if not hand.trick:
            expected = entered[0] if hand.next_leader is None else hand.next_leader
            hand.leader = seat  # type: ignore[assignment]
        else:
            last = hand.trick[-1][0]
            expected = next((s for s in self._order(last) if s in entered), -1)
        if seat != expected:
            self.fail(STRUCTURE, f"play by seat {seat}, expected seat {expected}")
        if seat == self.seat:
            if card not in hand.own:
                self.fail(SCORES, f"own play {card} is not in the tracked hand {sorted(hand.own)}")
            hand.own.discard(card)  # type: ignore[arg-type]
        hand.known.add(card)  # type: ignore[arg-type]
        hand.trick.append([seat, card])

    def _on_trick(self, e: dict[str, Any]) -> None:
        hand = self._need_hand("trick")
        entered = sum(1 for s in hand.status if s == "entered")
        if e.get("cards") != hand.trick or len(hand.trick) != entered:
            self.fail(SCORES, f"trick cards {e.get('cards')}, plays seen {hand.trick}")
        winner = ref.trick_winner(hand.trick, hand.trump) if hand.trick else -1
        if e.get("winner") != winner:
            self.fail(SCORES, f"trick {hand.trick} trump {hand.trump}: winner {e.get('winner')}, "
                              f"expected {winner}")
        expected = list(self.scores)
        if winner in range(ref.SEATS):
            expected[winner] -= 1
            hand.tricks[winner] += 1
        self._set_scores(e.get("scores"), expected, "trick")
        hand.played.append({"leader": hand.leader, "cards": hand.trick, "winner": winner})
        hand.trick = []
        hand.leader = None
        hand.next_leader = winner
        hand.tricks_done += 1

    def _on_hand_end(self, e: dict[str, Any]) -> None:
        hand = self._need_hand("hand_end")
        if hand.ended:
            self.fail(HAND_END, f"second hand_end for hand {hand.round, hand.hand}")
        hand.ended = True
        if e.get("tricks") != hand.tricks:
            self.fail(HAND_END, f"hand_end tricks {e.get('tricks')}, counted {hand.tricks}")
        muushig: list[int] = []
        if not self.round_over and not hand.all_folded:
            if hand.tricks_done != 5:
                self.fail(HAND_END, f"hand ended after {hand.tricks_done} tricks, round not over")
            muushig = [s for s in range(ref.SEATS)
                       if hand.status[s] == "entered" and hand.tricks[s] == 0]
        if sorted(e.get("muushig") or []) != muushig:
            self.fail(HAND_END, f"muushig {e.get('muushig')}, expected {muushig}")
        expected = list(self.scores)
        for seat in muushig:
            expected[seat] += 5
        self._set_scores(e.get("scores"), expected, "hand_end")

    def _on_round_end(self, e: dict[str, Any]) -> None:
        if self.hand is None or not self.hand.ended:
            self.fail(HAND_END, "round_end before the last hand's hand_end")
        if e.get("round") != self.round:
            self.fail(STRUCTURE, f"round_end {e.get('round')}, expected {self.round}")
        low = min(self.scores)
        if low <= 0:
            expected = self.scores.index(low)
        elif self.hands_in_round >= self.rules.get("max_hands", 200):
            expected = self.scores.index(low)  # lowest, ties to the lower seat
        else:
            expected = -1
            self.fail(STRUCTURE, f"round {self.round} ended with scores {self.scores} after "
                                 f"{self.hands_in_round} hands")
        if e.get("winner") != expected:
            self.fail(SCORES, f"round_end winner {e.get('winner')}, expected {expected}")
        self._set_scores(e.get("scores"), self.scores, "round_end")
        if expected in range(ref.SEATS):
            self.stars[expected] += 1
        self.round_ends.append(e)
        self.hand = None

    def _on_timeout(self, e: dict[str, Any]) -> None:
        self.fail(CLEAN, f"timeout {e}")

    def _on_autopilot(self, e: dict[str, Any]) -> None:
        self.fail(CLEAN, f"autopilot {e}")

    def _need_hand(self, kind: str) -> Hand:
        if self.hand is None:
            self.fail(STRUCTURE, f"{kind} outside a hand")
            self.hand = Hand(self.round, -1, 0, "AS", "S", [], set(), set())
        return self.hand

    def _answer_to(self, phase: str, shape: type) -> Any:
        request = self.last_request
        if request is None or request["phase"] != phase:
            return None
        answer = self.rec.answers.get(request["id"])
        # Under a repeated request id (which the id clause reports) the
        # answer found may be another request's: then there is none.
        return answer if isinstance(answer, shape) else None


def audit(rec: Recording) -> Auditor:
    return Auditor(rec).run()
