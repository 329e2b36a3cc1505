"""``arena replay``: a notation file re-played through the game's engine.

Every deal line's deck is checked against the commitment in the headers
(and, when the file gives the deal key, against the deck the key derives);
every decision line is applied to the engine, which refuses what the rules
do not allow; every other line must be what the engine itself does next.
The first line that fails is named, with what the engine expected there.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, Mapping

from arena.games import UnknownGameError, get_game
from arena.games.base import GameEngine, GameError, GameSpec
from arena.notation.document import BodyLine, Notation, label_of, label_text, notation_for
from arena.notation.errors import NotationError
from protocol.deals import DealKeyError, KeyedDeals, commitment, parse_deal_key


@dataclass
class Replayed:
    """A notation file that replayed: the engine at the end, every event it
    recorded (``for_record()`` form) and the counts a report gives."""

    notation: Notation
    engine: GameEngine
    events: list[dict[str, Any]] = field(default_factory=list)
    deals: int = 0
    actions: int = 0

    def summary(self) -> str:
        return (f"valid: {self.notation.game} match {self.notation.match_id}, "
                f"{self.deals} deals matching their commitments, {self.actions} decisions "
                f"within the rules, the result as recorded")


def derive_deck(spec: GameSpec, rules: Mapping[str, Any], key: bytes, table: str,
                label: Mapping[str, Any]) -> list[str]:
    """The deck the deal key gives ``label`` at ``table`` (protocol/deals.py),
    dealt by a fresh engine so the game's own deck and card names are used."""
    engine = spec.new_match(dict(rules), KeyedDeals(key, table, label_of=lambda: label), None)
    engine.start()
    return list(engine.deals()[0].deck)


class _Replay:
    def __init__(self, doc: Notation) -> None:
        self.doc = doc
        self.template = notation_for(doc.game)
        try:
            self.spec = get_game(doc.game)
        except UnknownGameError as exc:
            raise NotationError(doc.lines["Game"], str(exc)) from None
        deal_lines = [line for line in doc.body if line.record["kind"] == "deal"]
        try:
            self.engine = self.spec.new_match(dict(doc.rules), None,
                                              [line.record["deck"] for line in deal_lines])
        except GameError as exc:
            raise self._bad_deck(deal_lines) or NotationError(doc.lines["Rules"], str(exc)) from None
        if self.engine.rules != doc.rules:
            raise NotationError(doc.lines["Rules"], "the rules must be given in full, as the "
                                f"match played them: {self.engine.rules}")
        if len(doc.players) != self.engine.n_seats:
            raise NotationError(doc.lines["Seat 0"], f"{len(doc.players)} seats named, the "
                                f"rules seat {self.engine.n_seats}")
        self.key: bytes | None = None
        if doc.deal_key is not None:
            try:
                self.key = parse_deal_key(doc.deal_key)
            except DealKeyError as exc:
                raise NotationError(doc.lines["DealKey"], str(exc)) from None
        self.expected: deque[dict[str, Any]] = deque()
        self.out = Replayed(doc, self.engine)
        self.dealt: set[int] = set()

    def _bad_deck(self, deal_lines: list[BodyLine]) -> NotationError | None:
        """The first deal line whose deck the game refuses (not its cards)."""
        for line in deal_lines:
            try:
                self.spec.new_match(dict(self.doc.rules), None, [line.record["deck"]])
            except GameError as exc:
                return NotationError(line.number, str(exc))
        return None

    def run(self) -> Replayed:
        try:
            self.expected.extend(e.for_record() for e in self.engine.start())
        except GameError as exc:  # the decks given are not the game's
            first = next((b.number for b in self.doc.body if b.record["kind"] == "deal"), 0)
            raise NotationError(first, f"the engine cannot deal this: {exc}") from None
        for line in self.doc.body:
            self.line(line)
        end = self.doc.body[-1].number if self.doc.body else 0
        if self.expected:
            raise NotationError(end, "the file ends before the engine's next line: "
                                f"{self._text(self.expected[0])}")
        if not self.engine.finished:
            raise NotationError(end, f"the file ends before the match does (seat(s) "
                                f"{list(self.engine.to_act)} to act)")
        for deal in self.doc.deals:
            if id(deal) not in self.dealt:
                raise NotationError(deal.line, f"deal {label_text(deal.label)} is committed "
                                               "but never dealt")
        result = self.engine.result()
        if result != self.doc.result:
            raise NotationError(self.doc.lines["Result"], f"the engine's result is {result}")
        return self.out

    def _text(self, record: dict[str, Any]) -> str:
        template = self.template.for_kind(str(record.get("kind")))
        return template.write(record) if template else repr(record)

    def line(self, line: BodyLine) -> None:
        record = line.record
        if not self.expected:
            self.act(line)
        want = self.expected.popleft()
        template = self.template.for_kind(str(want.get("kind")))
        if template is None or template.project(want) != record:
            raise NotationError(line.number, f"the engine's next line is: {self._text(want)}")
        if record["kind"] == "deal":
            self.check_deal(line)
        self.out.events.append(want)

    def act(self, line: BodyLine) -> None:
        engine = self.engine
        _, steps = self.spec.replay_inputs([line.record]) if self.spec.replay_inputs else ([], [])
        if not steps:
            what = (f"seat(s) {list(engine.to_act)} to decide" if not engine.finished
                    else "the match is over")
            raise NotationError(line.number, f"the engine does nothing here ({what}); "
                                             "a decision line comes first")
        seat, action = steps[0]
        seat = record_seat(line.record, engine.current_seat if seat is None else seat)
        if seat not in engine.to_act:
            raise NotationError(line.number, f"seat {seat} acts, but the decision is owed by "
                                             f"seat(s) {list(engine.to_act)}")
        try:
            events = engine.play_for(seat, action)
        except GameError as exc:
            raise NotationError(line.number, f"seat {seat} may not do this: {exc}") from None
        self.out.actions += 1
        self.expected.extend(e.for_record() for e in events)
        if not self.expected:
            raise NotationError(line.number, "the engine took the decision but shows nothing")

    def check_deal(self, line: BodyLine) -> None:
        label = label_of(line.record)
        deck = line.record["deck"]
        deal = self.doc.deal(label)
        if deal is None:
            raise NotationError(line.number, f"no Commit header for deal {label_text(label)}")
        if deal.salt is None:
            raise NotationError(line.number, f"no Salt header for deal {label_text(label)}: "
                                             "the deck cannot be checked against its commitment")
        if commitment(deal.salt, deck) != deal.commitment:
            raise NotationError(line.number, f"this deck is not the one committed to on line "
                                             f"{deal.line} (salt and deck hash to another value)")
        if self.key is not None:
            derived = derive_deck(self.spec, self.doc.rules, self.key,
                                  self.doc.deal_table or "", label)
            if derived != deck:
                raise NotationError(line.number, "this deck is not the one the deal key derives")
        self.dealt.add(id(deal))
        self.out.deals += 1


def record_seat(record: Mapping[str, Any], default: int | None) -> int:
    """The seat a decision line names (every decision line names one)."""
    seat = record.get("seat", default)
    return -1 if seat is None else int(seat)


def replay_notation(doc: Notation) -> Replayed:
    """Re-play ``doc``; raise :class:`NotationError` at its first bad line."""
    return _Replay(doc).run()
