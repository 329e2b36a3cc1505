"""The thirteen-card state machine: a match of ``deals`` deals.

Pure and sans-IO (see ``arena.games.base``): chance enters only as deck
orders, taken from an explicit list or from one ``rng.shuffle`` of the
canonical 52-card deck per deal, so a seed fixes the decks whatever the
players do, and (decks, actions) replays a match exactly.

Every seat arranges at once, so the primary API is seat-addressed:
``to_act`` names every seat that still owes its arrangement for the deal,
``check_for`` checks a seat's answer, ``apply`` applies it for that seat
(``play_for`` does both), and the deal's showdown comes with the last one.
The sequential API (``current_seat``, ``check_action``...) is a stand-in
that serves the lowest seat in ``to_act``, so generic code that steps one
seat at a time still plays a whole match.
"""

from __future__ import annotations

import random
from functools import lru_cache
from typing import Any, ClassVar

from arena.games.base import (CheckedAction, DealInfo, GameError, GameEvent, NotYourTurnError,
                              RuleConfigError, StaleActionError, stale_action)
from arena.games.thirteen.arranger import Split, best_arrangement
from arena.games.thirteen.evaluator import Wheel
from arena.games.thirteen.cards import CARD_INDEX, DECK, card_strs, deal_hands
from arena.games.thirteen.events import Arranged, Deal, DealStart, Showdown
from arena.games.thirteen.rules import ThirteenRules
from arena.games.thirteen.scoring import SeatHands, rank_places, score_deal
from arena.games.thirteen.wire import CONSTRAINTS, check_arrangement, seat_hands

ARRANGE = "arrange"


@lru_cache(maxsize=64)
def _house_arrangement(hand: tuple[int, ...], wheel: Wheel, mid_full_house_bonus: int) -> Split:
    """``best_arrangement``, kept for the last few hands asked about: a
    search that a seat's default may ask for again within its deal. A memo
    of a pure function, so no engine holds it in its state."""
    return best_arrangement(hand, wheel, mid_full_house_bonus)


class ThirteenEngine:
    """One match. Create, ``start()``, then ``play_for`` each seat in
    ``to_act`` until ``finished``."""

    game: ClassVar[str] = "thirteen"

    def __init__(
        self,
        rules: dict[str, Any] | None = None,
        rng: random.Random | None = None,
        decks: list[list[str]] | None = None,
    ) -> None:
        opts = ThirteenRules.from_dict(rules)
        self.options = opts
        self.rules = opts.as_dict()
        self.n_seats = opts.players
        self.n_deals = opts.deals
        self._decks = [self._check_deck(i, d) for i, d in enumerate(decks or ())]
        self._deck_pos = 0
        # Explicit decks without an rng mean "replay": running out is an error.
        self._rng = rng if rng is not None or decks else random.Random()
        self._started = False
        self._finished = False
        self._deal = 0
        self._hands: tuple[tuple[int, ...], ...] = ()
        self._splits: list[Split | None] = [None] * self.n_seats
        self._totals = [0] * self.n_seats
        self._deal_scores: list[tuple[int, ...]] = []
        self._deal_events: list[Deal] = []

    # ----------------------------------------------------------- set-up
    def _check_deck(self, i: int, deck: Any) -> tuple[int, ...]:
        try:
            codes = tuple(CARD_INDEX[c] for c in deck)
        except (KeyError, TypeError):
            raise RuleConfigError(f"deck {i} holds a malformed card; cards are strings like 'AS', 'TH'") from None
        if len(codes) != len(DECK) or set(codes) != set(DECK):
            raise RuleConfigError(f"deck {i} is not an order of the 52 cards")
        return codes

    def _next_deck(self) -> tuple[int, ...]:
        if self._deck_pos < len(self._decks):
            deck = self._decks[self._deck_pos]
        elif self._rng is None:
            raise GameError(f"no deck left: the match needs deal number {self._deck_pos + 1}")
        else:
            cards = list(DECK)
            self._rng.shuffle(cards)  # exactly one shuffle per deal
            deck = tuple(cards)
        self._deck_pos += 1
        return deck

    # ------------------------------------------------------------ flow
    def start(self) -> list[GameEvent]:
        if self._started:
            raise GameError("the match has already started")
        self._started = True
        ev: list[GameEvent] = []
        self._begin_deal(ev)
        return ev

    def _begin_deal(self, ev: list[GameEvent]) -> None:
        deck = self._next_deck()
        # Always four hands; seats beyond the match's count leave theirs unused.
        self._hands = deal_hands(deck)[: self.n_seats]
        self._splits = [None] * self.n_seats
        deal = Deal(self._deal, deck)
        self._deal_events.append(deal)
        ev.append(deal)
        ev.append(DealStart(self._deal, self._hands))

    @property
    def finished(self) -> bool:
        return self._finished

    @property
    def to_act(self) -> tuple[int, ...]:
        if not self._started or self._finished:
            return ()
        return tuple(s for s, split in enumerate(self._splits) if split is None)

    def _require(self, seat: int) -> None:
        if not isinstance(seat, int) or not 0 <= seat < self.n_seats:
            raise NotYourTurnError(f"no seat {seat!r} at a {self.n_seats}-seat table")
        if not self._started:
            raise NotYourTurnError("the match has not started")
        if self._finished:
            raise NotYourTurnError("the match is over")
        if self._splits[seat] is not None:
            raise NotYourTurnError(f"seat {seat} has already arranged its cards for deal {self._deal}")

    def phase_for(self, seat: int) -> str:
        self._require(seat)
        return ARRANGE

    def request_for(self, seat: int) -> dict[str, Any]:
        self._require(seat)
        return {"constraints": dict(CONSTRAINTS)}

    def check_for(self, seat: int, action: Any) -> CheckedAction[Split]:
        """``seat``'s arrangement checked for this deal (canonical form with
        its split), or IllegalActionError."""
        self._require(seat)
        split = check_arrangement(
            action, self._hands[seat], self.options.wheel, reject_fouls=self.options.foul_policy == "reject"
        )
        canonical = {"front": card_strs(split.front), "middle": card_strs(split.middle),
                     "back": card_strs(split.back)}
        return CheckedAction(self, seat, self._deal, canonical, split)

    def apply(self, checked: CheckedAction[Split]) -> list[GameEvent]:
        """Apply an arrangement ``check_for`` checked in this deal, for its
        seat (a decision is the seat's arrangement of one deal)."""
        if checked.engine is not self or checked.decision != self._deal:
            raise stale_action(checked, self, self._deal, "deal")
        seat = checked.seat
        if self._splits[seat] is not None:
            raise StaleActionError(f"seat {seat}'s arrangement for deal {self._deal} is already applied")
        split = checked.detail
        self._splits[seat] = split
        ev: list[GameEvent] = [Arranged(self._deal, seat, split)]
        if all(s is not None for s in self._splits):
            self._showdown(ev)
        return ev

    def default_for(self, seat: int) -> dict[str, list[str]]:
        """The house strategy's arrangement (never fouled)."""
        self._require(seat)
        o = self.options
        split = _house_arrangement(self._hands[seat], o.wheel, o.mid_full_house_bonus)
        return {"front": card_strs(split.front), "middle": card_strs(split.middle), "back": card_strs(split.back)}

    def _showdown(self, ev: list[GameEvent]) -> None:
        o = self.options
        splits: tuple[Split, ...] = tuple(s for s in self._splits if s is not None)
        hands: list[SeatHands] = [seat_hands(s, o.wheel) for s in splits]
        score = score_deal(hands, shoot=o.shoot, mid_full_house_bonus=o.mid_full_house_bonus)
        for s, v in enumerate(score.scores):
            self._totals[s] += v
        self._deal_scores.append(score.scores)
        ev.append(Showdown(self._deal, splits, score.fouled, score.pairs, score.scores, tuple(self._totals)))
        self._deal += 1
        if self._deal >= self.n_deals:
            self._finished = True
        else:
            self._begin_deal(ev)

    # ------------------------------------------- sequential stand-ins
    @property
    def current_seat(self) -> int | None:
        acting = self.to_act
        return acting[0] if acting else None

    @property
    def phase(self) -> str | None:
        return ARRANGE if self.to_act else None

    def _current(self) -> int:
        seat = self.current_seat
        if seat is None:
            raise NotYourTurnError("the match is over" if self._started else "the match has not started")
        return seat

    def legal_actions(self) -> list[Any]:
        """Empty: an arrangement is described by constraints, not listed."""
        return []

    def check_action(self, action: Any) -> CheckedAction[Split]:
        return self.check_for(self._current(), action)

    def play(self, action: Any) -> list[GameEvent]:
        return self.apply(self.check_action(action))

    def play_for(self, seat: int, action: Any) -> list[GameEvent]:
        return self.apply(self.check_for(seat, action))

    def default_action(self) -> Any:
        return self.default_for(self._current())

    # ------------------------------------------------------- read-only
    @property
    def deal_label(self) -> dict[str, int]:
        """Names the deal being made (protocol §5): a keyed deck source gives
        every duplicate rotation of a table the same deck for the same deal."""
        return {"deal": self._deal}

    def deals(self) -> list[DealInfo]:
        return [d.deal for d in self._deal_events]

    def observation(self, seat: int) -> dict[str, Any]:
        """Protocol §5.3 ``state``: only this seat's own cards, the totals,
        and who has answered (no one's cards) until the showdown."""
        if not isinstance(seat, int) or not 0 <= seat < self.n_seats:
            raise GameError(f"no seat {seat!r} at a {self.n_seats}-seat table")
        deal = min(self._deal, self.n_deals - 1)
        return {
            "deal": deal,
            "deals": self.n_deals,
            "seat": seat,
            "cards": card_strs(self._hands[seat]) if self._hands else [],
            "totals": list(self._totals),
            "arranged": [s is not None for s in self._splits],
        }

    def result(self) -> dict[str, Any]:
        """Protocol §5.6 ``result``."""
        if not self._finished:
            raise GameError("the match is not finished: no result yet")
        return {
            "totals": list(self._totals),
            "deal_scores": [list(s) for s in self._deal_scores],
            "ranks": rank_places(self._totals),
        }
