"""The checker's scripted thirteen-card matches (protocol: thirteen §5).

Unlike the Muushig script (``hand``, a second small reading of the rules),
these matches are played by the arena's own engine, so the showdowns,
scores and results the bot is sent are exactly what the arena would send:
the checker acts as a faithful server. The decks are fixed shuffles; the
house seats arrange at random (never fouled) from a fixed seed, and they
answer while the bot's request is open, as house bots at a real table do.

Per deal the bot's seat sees ``commit {deal, commitment}``, its own
``deal_start``, one ``arrange`` request (``constraints``, no ``legal``), the
other seats' ``arranged`` events, its own ``arranged`` and the ``showdown``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Generator

from arena.checkbot.hand import Ask, Assessment, Phase, Step, Tell
from arena.games.base import IllegalActionError
from arena.games.thirteen import ThirteenEngine
from arena.games.thirteen.arranger import random_valid_arrangement
from arena.games.thirteen.cards import CARD_INDEX, CARD_STR, card_strs
from arena.games.thirteen.events import Deal, Showdown
from arena.games.thirteen.scoring import rank_places
from arena.games.thirteen.wire import CONSTRAINTS, check_arrangement, seat_hands
from protocol.deals import commitment

GAME = "thirteen"

# Every flag of the rules page, with values that differ between matches so
# a bot that assumes the defaults is seen with the others too. Match A plays
# under foul_policy = penalize (a foul is accepted and costs the bot), the
# error/reseat matches under reject (a foul is refused with illegal_action).
PENALIZE_RULES: dict[str, Any] = {
    "players": 4, "wheel": "lowest", "foul_policy": "penalize", "shoot": "plus3", "mid_full_house_bonus": 2,
}
REJECT_RULES: dict[str, Any] = {
    "players": 4, "wheel": "second_highest", "foul_policy": "reject", "shoot": "double", "mid_full_house_bonus": 1,
}
MATCH_A_DEALS = 6  # match_start, arrange, illegal_action, unknown_fields, multiplex, short_deadline, reconnect


def fixed_deck(seed: int) -> tuple[str, ...]:
    """A shuffle that is the same on every run (one per deal)."""
    cards = list(CARD_STR)
    random.Random(seed).shuffle(cards)
    return tuple(cards)


@dataclass
class ThirteenMatch:
    """One scripted thirteen match and how far it has gone (the same
    interface as ``script.ScriptedMatch``: ``next_step`` / ``settle``)."""

    match_id: str
    seat: int
    players: list[str]
    rules: dict[str, Any]
    seed: int
    decision_ms: int
    next_id: int = 1
    finished: bool = False
    engine: ThirteenEngine = field(init=False)
    decks: list[tuple[str, ...]] = field(init=False)
    salts: list[str] = field(init=False)
    deal_scores: list[list[int]] = field(default_factory=list)
    _house_rng: random.Random = field(init=False)
    _steps: Generator[Step, Any, None] | None = None
    _reply: Any = None

    def __post_init__(self) -> None:
        deals = int(self.rules["deals"])
        self.decks = [fixed_deck(self.seed * 1000 + d) for d in range(deals)]
        self.salts = [f"c0ffee-{self.match_id}-{d}" for d in range(deals)]
        self.engine = ThirteenEngine(dict(self.rules), None, [list(d) for d in self.decks])
        self._house_rng = random.Random(self.seed)

    @property
    def reject_fouls(self) -> bool:
        return self.engine.options.foul_policy == "reject"

    def match_start(self) -> dict[str, Any]:
        return {
            "type": "match_start",
            "match": self.match_id,
            "game": GAME,
            "seat": self.seat,
            "players": list(self.players),
            "rules": dict(self.engine.rules),
            "limits": {"decision_ms": self.decision_ms, "bank_ms": 0},
        }

    # --- the script --------------------------------------------------------

    def _tells(self, events: list[Any]) -> list[Tell]:
        """What the bot's seat sees of engine events, with the server's
        commit in place of the (hidden) deck."""
        tells = []
        for ev in events:
            if isinstance(ev, Deal):
                tells.append(Tell({"kind": "commit", "deal": ev.deal_no,
                                   "commitment": commitment(self.salts[ev.deal_no], self.decks[ev.deal_no])}))
                continue
            if isinstance(ev, Showdown):
                self.deal_scores.append(list(ev.scores))
            wire = ev.for_seat(self.seat)
            if wire is not None:
                tells.append(Tell(wire))
        return tells

    def _house_answers(self) -> list[Any]:
        events: list[Any] = []
        wheel = self.engine.options.wheel
        for seat in self.engine.to_act:
            if seat == self.seat:
                continue
            hand = tuple(CARD_INDEX[c] for c in self.engine.observation(seat)["cards"])
            split = random_valid_arrangement(hand, self._house_rng, wheel)
            events += self.engine.play_for(seat, {"front": card_strs(split.front),
                                                  "middle": card_strs(split.middle),
                                                  "back": card_strs(split.back)})
        return events

    def _deals(self) -> Generator[Step, Any, None]:
        events = self.engine.start()
        while True:
            yield from self._tells(events)
            if self.engine.finished:
                return
            state = self.engine.observation(self.seat)
            constraints = self.engine.request_for(self.seat)["constraints"]
            house = self._tells(self._house_answers())
            action = yield Ask(Phase.ARRANGE, [], state, constraints=constraints, followups=tuple(house))
            events = self.engine.play_for(self.seat, action)

    def next_step(self) -> Step | None:
        """The next thing the bot's seat sees, or None at the end."""
        if self.finished:
            return None
        if self._steps is None:
            self._steps = self._deals()
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
        """The arrangement applied for the last ``Ask`` (always a valid one)."""
        self._reply = action

    # --- the referee's questions --------------------------------------------

    def assess(self, ask: Ask, action: Any) -> Assessment:
        """Protocol thirteen §5.4: 3/5/5 of the seat's own cards, none twice;
        a foul is refused under ``reject`` and accepted with a warning under
        ``penalize``. The reasons are the engine's own."""
        hand = tuple(CARD_INDEX[c] for c in ask.state["cards"])
        wheel = self.engine.options.wheel
        try:
            split = check_arrangement(action, hand, wheel, reject_fouls=self.reject_fouls)
        except IllegalActionError as exc:
            return Assessment(legal=False, reason=str(exc))
        applied = {"front": card_strs(split.front), "middle": card_strs(split.middle), "back": card_strs(split.back)}
        warning = ""
        if seat_hands(split, wheel).fouled:
            try:
                check_arrangement(action, hand, wheel, reject_fouls=True)
            except IllegalActionError as exc:
                warning = str(exc)
        return Assessment(legal=True, applied=applied, warning=warning)

    def default(self, ask: Ask) -> Any:
        """The server's own arrangement at the deadline (never fouled)."""
        return self.engine.default_for(self.seat)

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
            "constraints": dict(ask.constraints or CONSTRAINTS),
            "state": ask.state,
        }

    def match_end(self) -> dict[str, Any]:
        """The result of the deals shown so far (protocol thirteen §5.6) and
        the reveal of every deck committed to."""
        totals = [sum(scores[s] for scores in self.deal_scores) for s in range(self.engine.n_seats)]
        started = len(self.engine.deals())
        return {
            "type": "match_end",
            "match": self.match_id,
            "result": {"totals": totals, "deal_scores": [list(s) for s in self.deal_scores],
                       "ranks": rank_places(totals)},
            "reveal": [{"deal": d, "salt": self.salts[d], "deck": list(self.decks[d])} for d in range(started)],
        }


def _players(bot_name: str, seat: int, count: int) -> list[str]:
    return [bot_name if s == seat else f"house-{s}" for s in range(count)]


def match_a(bot_name: str, decision_ms: int) -> ThirteenMatch:
    """The main match: the bot at seat 1, six deals under penalize."""
    rules = {**PENALIZE_RULES, "deals": MATCH_A_DEALS}
    return ThirteenMatch(match_id="check-a", seat=1, players=_players(bot_name, 1, 4), rules=rules,
                         seed=13, decision_ms=decision_ms)


def match_b(bot_name: str, decision_ms: int, first_id: int, match_id: str = "check-b",
            players: int = 4) -> ThirteenMatch:
    """A one-deal match under reject with ids from ``first_id`` (see
    ``script.match_b``: ids shared with match A catch a bot that keys its
    requests by id alone)."""
    seat = players - 1
    rules = {**REJECT_RULES, "players": players, "deals": 1}
    return ThirteenMatch(match_id=match_id, seat=seat, players=_players(bot_name, seat, players), rules=rules,
                         seed=sum(map(ord, match_id)), decision_ms=decision_ms, next_id=first_id)
