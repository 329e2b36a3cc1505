"""The wire face of the engine (protocol §3): legal lists in protocol
order, checking a bot's answer with a reason it can act on, defaults (§11).

Everything here converts between wire strings and the engine's fast codes;
the rules themselves live in the engine and ``legality``.
"""

from __future__ import annotations

from typing import Any

from arena.games.base import IllegalActionError, NotYourTurnError
from arena.games.muushig.cards import BIT, CARD_STR, join_cards, mask_cards, mask_strs, parse_card
from arena.games.muushig.legality import discard_sets, explain_illegal
from arena.games.muushig.phases import DECIDE, DECLINE, ENTER, EXCHANGE, FOLD, HAND_SIZE, PLAY, TAKE


class WireMixin:
    """Mixed into :class:`MuushigEngine`; uses its private state read-only
    and changes state only through ``apply_code``."""

    _seat: int | None
    _stage: int
    _hands: list[int]
    _limit: int
    _legal_wire: list[Any] | None

    def legal_actions(self) -> list[Any]:
        """Every legal answer of the current seat, protocol order (cached per
        decision: an exchange can have 32 discard sets)."""
        seat = self._seat
        if seat is None:
            return []
        lw = self._legal_wire
        if lw is None:
            st, hand = self._stage, self._hands[seat]
            if st == PLAY:
                lw = [CARD_STR[c] for c in mask_cards(self.legal_mask())]  # type: ignore[attr-defined]
            elif st == DECIDE:
                lw = ["enter", "fold"]
            elif st == EXCHANGE:
                lw = [[CARD_STR[c] for c in s] for s in discard_sets(hand, self._limit)]
            else:
                lw = [None, *mask_strs(hand)]
            self._legal_wire = lw
        return list(lw)

    def check_action(self, action: Any) -> Any:
        """The canonical form of a legal ``action``, else IllegalActionError."""
        return self._check(action)[0]

    def apply(self, action: Any) -> list:
        return self.apply_code(self._check(action)[1])  # type: ignore[attr-defined]

    def default_action(self) -> Any:
        """rules §11: fold, keep every card, decline, lowest playable card."""
        self._require_turn()
        st = self._stage
        if st == DECIDE:
            return "fold"  # a decision is only requested when folding is allowed
        if st == EXCHANGE:
            return []
        if st == TAKE:
            return None
        return CARD_STR[mask_cards(self.legal_mask())[0]]  # type: ignore[attr-defined]

    def _require_turn(self) -> int:
        seat = self._seat
        if seat is None:
            started = getattr(self, "_started", False)
            raise NotYourTurnError("the match is over" if started else "the match has not started")
        return seat

    def _held(self, hand: int, action: Any) -> int:
        card = parse_card(action)
        if not hand & BIT[card]:
            raise IllegalActionError(
                f"not a card in your hand: {CARD_STR[card]} (you hold {join_cards(mask_cards(hand))})"
            )
        return card

    def _check(self, action: Any) -> tuple[Any, int]:
        seat = self._require_turn()
        st, hand = self._stage, self._hands[seat]
        if st == PLAY:
            card = self._held(hand, action)
            legal = self.legal_mask()  # type: ignore[attr-defined]
            if not legal & BIT[card]:
                e: Any = self
                raise IllegalActionError(
                    explain_illegal(
                        card, hand, legal, e._trump, e._led if e._trick else None,
                        e._win, e._trumped, not e._played, e._ace_first,
                    )
                )
            return CARD_STR[card], card
        if st == DECIDE:
            if action == "enter":
                return "enter", ENTER
            if action == "fold":
                return "fold", FOLD
            raise IllegalActionError(f"a decision must be \"enter\" or \"fold\", not {action!r}")
        if st == TAKE:
            if action is None:
                return None, DECLINE
            if not isinstance(action, str):
                raise IllegalActionError(
                    f"take must be null (decline) or the card of your hand to give up, not {action!r}"
                )
            card = self._held(hand, action)
            return CARD_STR[card], card
        return self._check_exchange(hand, action)

    def _check_exchange(self, hand: int, action: Any) -> tuple[list[str], int]:
        if not isinstance(action, (list, tuple)):
            raise IllegalActionError(
                f"an exchange is a list of the cards to discard ([] keeps all), not {action!r}"
            )
        limit = self._limit
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
