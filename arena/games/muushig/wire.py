"""The wire face of the engine (protocol §3): legal lists in protocol
order, checking a bot's answer with a reason it can act on, defaults (§11).

Everything here converts between wire strings and the engine's fast codes;
the rules themselves live in the engine and ``legality``.
"""

from __future__ import annotations

from itertools import combinations
from typing import TYPE_CHECKING, Any

from arena.games.base import IllegalActionError, NotYourTurnError
from arena.games.muushig.cards import (BIT, CARD_INDEX, CARD_STR, join_cards, mask_cards, mask_strs,
                                       parse_card)
from arena.games.muushig.legality import explain_illegal
from arena.games.muushig.phases import DECIDE, DECLINE, ENTER, EXCHANGE, FOLD, HAND_SIZE, PLAY, TAKE

if TYPE_CHECKING:
    from arena.games.muushig.engine import MuushigEngine


class WireFace:
    """The wire API of one :class:`MuushigEngine`, built on its read-only
    accessors (``current_seat``, ``stage``, ``hand``, ``legal_mask()``); it
    never changes the engine: ``check`` gives the engine the fast code to
    apply."""

    def __init__(self, engine: "MuushigEngine") -> None:
        self.engine = engine
        self._legal: list[Any] | None = None  # the legal list of decision _legal_for
        self._legal_for = -1

    def legal_actions(self) -> list[Any]:
        """Every legal answer of the current seat, protocol order, a new list
        each call (an exchange's, up to 32 discard sets, made once per
        decision: their inner lists are shared between calls)."""
        engine = self.engine
        seat = engine.current_seat
        if seat is None:
            return []
        stage = engine.stage
        if stage == PLAY:
            return mask_strs(engine.legal_mask())
        if stage == DECIDE:
            return ["enter", "fold"]
        hand = engine.hand
        if stage == TAKE:
            return [None, *mask_strs(hand.hands[seat])]
        legal = self._legal
        if legal is None or self._legal_for != engine.decision_number:
            # discard_sets in wire strings: combinations of the hand's
            # strings in canonical order give the same sets in the same order.
            held = mask_strs(hand.hands[seat])
            legal = [list(s) for k in range(min(hand.exchange_limit, len(held)) + 1)
                     for s in combinations(held, k)]
            self._legal, self._legal_for = legal, engine.decision_number
        return list(legal)

    def default_action(self) -> Any:
        """rules §11: fold, keep every card, decline, lowest playable card."""
        self._require_turn()
        stage = self.engine.stage
        if stage == DECIDE:
            return "fold"  # a decision is only requested when folding is allowed
        if stage == EXCHANGE:
            return []
        if stage == TAKE:
            return None
        return CARD_STR[mask_cards(self.engine.legal_mask())[0]]

    def _require_turn(self) -> int:
        seat = self.engine.current_seat
        if seat is None:
            started = self.engine.started
            raise NotYourTurnError("the match is over" if started else "the match has not started")
        return seat

    def _held(self, hand: int, action: Any) -> int:
        card = parse_card(action)
        if not hand & BIT[card]:
            raise IllegalActionError(
                f"not a card in your hand: {CARD_STR[card]} (you hold {join_cards(mask_cards(hand))})"
            )
        return card

    def check(self, action: Any) -> tuple[Any, int]:
        """(canonical action, fast code) of a legal ``action``, else IllegalActionError."""
        engine = self.engine
        seat = engine.current_seat
        if seat is None:
            self._require_turn()
        stage, state = engine.stage, engine.hand
        hand = state.hands[seat]  # type: ignore[index]  # _require_turn raised if None
        if stage == PLAY:
            legal = engine.legal_mask()
            if type(action) is str:  # the usual answer, a playable card: two look-ups
                card = CARD_INDEX.get(action, -1)
                if card >= 0 and legal >> card & 1:
                    return CARD_STR[card], card
            card = self._held(hand, action)  # else the reason, as for any card
            if not legal & BIT[card]:
                raise IllegalActionError(
                    explain_illegal(
                        card, hand, legal, state.trump, state.led_suit if state.trick else None,
                        state.winning_card, state.trumped, not state.played,
                        engine.options.trump_ace_first_lead,
                    )
                )
            return CARD_STR[card], card
        if stage == DECIDE:
            if action == "enter":
                return "enter", ENTER
            if action == "fold":
                return "fold", FOLD
            raise IllegalActionError(f"a decision must be \"enter\" or \"fold\", not {action!r}")
        if stage == TAKE:
            if action is None:
                return None, DECLINE
            if not isinstance(action, str):
                raise IllegalActionError(
                    f"take must be null (decline) or the card of your hand to give up, not {action!r}"
                )
            card = self._held(hand, action)
            return CARD_STR[card], card
        return self._check_exchange(hand, state.exchange_limit, action)

    def _check_exchange(self, hand: int, limit: int, action: Any) -> tuple[list[str], int]:
        if not isinstance(action, (list, tuple)):
            raise IllegalActionError(
                f"an exchange is a list of the cards to discard ([] keeps all), not {action!r}"
            )
        if len(action) > limit:
            why = f"only {limit} left in the stock" if limit < HAND_SIZE else f"a hand has {HAND_SIZE} cards"
            raise IllegalActionError(f"exchange must discard at most {limit} cards: {why}")
        cards = [self._held(hand, a) for a in action]
        if len(set(cards)) != len(cards):
            twice = sorted({c for c in cards if cards.count(c) > 1})
            raise IllegalActionError(f"card listed twice in the exchange: {join_cards(twice)}")
        cards.sort()
        held = mask_cards(hand)
        code = 0
        for c in cards:
            code |= 1 << held.index(c)
        return [CARD_STR[c] for c in cards], code
