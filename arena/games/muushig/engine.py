"""The Muushig state machine: a whole match of rounds, hands and tricks.

Pure and sans-IO (see ``arena.games.base``): chance enters only as deck
orders (:mod:`.decks`), and (decks, actions) replays a match exactly. The
hand being played is a :class:`~.state.HandState`; stages follow
:data:`~.state.TRANSITIONS`. Two faces: the wire API of :class:`GameEngine`
in protocol strings (:class:`~.wire.WireFace`), and a fast API in small ints,
``legal_codes()`` / ``apply_code(code)``: decide ``ENTER``/``FOLD``; exchange
a bit set over the *positions* of the hand's cards in canonical order (bit i
= the i-th lowest card is discarded); take ``DECLINE`` or a card index; play
a card index. Rules sections (§) refer to the arena's rules page.
"""

from __future__ import annotations

import random
from typing import Any, ClassVar

from arena.games.base import (CheckedAction, DealInfo, GameError, IllegalActionError, NotYourTurnError,
                              SequentialGame, stale_action)
from arena.games.muushig.cards import BIT, mask_cards
from arena.games.muushig.decks import DeckSource
from arena.games.muushig.events import (AllFolded, Deal, Decision, Exchange, HandEnd, HandStart,
                                        MuushigEvent, Play, RoundEnd, RoundStart, Take, Trick)
from arena.games.muushig.legality import follow_mask, lead_mask
from arena.games.muushig.options import MuushigRules
from arena.games.muushig.phases import (DECIDE, DECLINE, ENTER, ENTERED, EXCHANGE, FOLD, FOLDED,
                                        HAND_SIZE, MUUSHIG_BONUS, OVER, PHASES, PLAY, POS_SETS,
                                        START_SCORE, TAKE)
from arena.games.muushig.state import TRANSITIONS, HandState, check_transition
from arena.games.muushig.views import Observer, match_result
from arena.games.muushig.wire import WireFace


class MuushigEngine(SequentialGame):
    """One Muushig match. Create, call ``start()``, then ``apply`` actions of
    ``current_seat`` until ``finished``.

    The match-level state (round, hand number, dealer, scores, stars) lives
    here; the hand being played is one :class:`HandState`, replaced at each
    deal. The wire API (``legal_actions``, ``check_action``, ``apply``,
    ``default_action``) is a :class:`WireFace` over the read-only accessors;
    a checked action carries its fast code, which ``apply`` applies.
    """

    game: ClassVar[str] = "muushig"

    def __init__(
        self,
        rules: dict[str, Any] | None = None,
        rng: random.Random | None = None,
        decks: list[list[str]] | None = None,
    ) -> None:
        opts = MuushigRules.from_dict(rules)
        self.options = opts
        self.rules = opts.as_dict()
        self.n_seats = n = opts.players
        self.n_rounds = opts.n_rounds
        self._decks = DeckSource(n, rng, decks)
        self._max_hands = opts.max_hands
        self._auto_enter_after = opts.auto_enter_after_folds
        self._last_two_forced = opts.last_two_forced
        self._trump_ace_first = opts.trump_ace_first_lead
        self._started = False
        # Read-only outside the engine: the stage number (phases.DECIDE …
        # OVER), the seat that must act, and the hand being played. Plain
        # attributes, not properties: the wire face reads them per decision.
        self.stage = OVER
        self.current_seat: int | None = None
        self._round_number = 0
        self._hand_number = 0
        self._dealer = 0
        self._scores = [START_SCORE] * n
        self._stars = [0] * n
        self._final_scores: list[tuple[int, ...]] = []
        self._fold_streaks = [0] * n  # folds in a row, for auto_enter_after_folds
        self._deal_events: list[Deal] = []
        self.hand: HandState = HandState.new(n)
        # Counts the decisions asked for: tells the wire face when what it
        # keeps of a decision is stale, and ``apply`` which checked actions
        # are for the pending decision.
        self.decision_number = 0
        self._observer = Observer()  # the view's memo, not part of the game
        self._wire = WireFace(self)

    # ------------------------------------------------ read-only accessors
    @property
    def finished(self) -> bool:
        return self._started and self.stage == OVER

    @property
    def started(self) -> bool:
        return self._started
    @property
    def phase(self) -> str | None:
        return PHASES[self.stage] if self.current_seat is not None else None

    @property
    def round_number(self) -> int:
        return self._round_number

    @property
    def hand_number(self) -> int:
        return self._hand_number

    @property
    def dealer(self) -> int:
        return self._dealer

    @property
    def scores(self) -> tuple[int, ...]:
        return tuple(self._scores)

    @property
    def stars(self) -> tuple[int, ...]:
        return tuple(self._stars)

    # ------------------------------------------------------------ flow
    def start(self) -> list[MuushigEvent]:
        if self._started:
            raise GameError("the match has already started")
        self._started = True
        events: list[MuushigEvent] = []
        self._begin_round(events)
        self._advance(events)
        return events

    def _set_stage(self, stage: int) -> None:
        check_transition(self.stage, stage)
        self.stage = stage

    def _begin_round(self, events: list[MuushigEvent]) -> None:
        n = self.n_seats
        self._hand_number = 0
        self._dealer = self._round_number % n  # §2: round r is first dealt by seat r
        self._scores = [START_SCORE] * n
        self._fold_streaks = [0] * n
        events.append(RoundStart(self._round_number, self._dealer, tuple(self._scores)))
        self._deal(events)

    def _deal(self, events: list[MuushigEvent]) -> None:
        """§3: card i to seat (dealer+1+i) mod n, then face-up, then stock."""
        deck = self._decks.next()
        n, dealer = self.n_seats, self._dealer
        hand = self.hand = HandState.new(n)
        self.decision_number += 1
        dealt = HAND_SIZE * n
        masks = hand.hands
        for j in range(n):
            mask = 0
            for card in deck[j:dealt:n]:
                mask |= BIT[card]
            masks[(dealer + 1 + j) % n] = mask
        hand.face_up = deck[dealt]
        hand.trump = deck[dealt] >> 3
        hand.stock = deck[dealt + 1 :]
        hand.speaking_order = [(dealer + 1 + j) % n for j in range(n)]  # dealer speaks last
        self._set_stage(DECIDE)
        deal = Deal(self._round_number, self._hand_number, deck)
        self._deal_events.append(deal)
        events.append(deal)
        events.append(HandStart(self._round_number, self._hand_number, dealer, hand.face_up,
                                tuple(masks)))

    def _advance(self, events: list[MuushigEvent]) -> None:
        """Run every automatic step until a seat must choose or the match ends."""
        while True:
            stage = self.stage
            if stage == DECIDE:
                if self._step_decide(events):
                    return
            elif stage == EXCHANGE:
                if self._step_exchange():
                    return
            elif stage == TAKE:
                if self.hand.entered[-1] == self._dealer:
                    self._ask(self._dealer, TAKE)  # §6: offered to an entered dealer
                else:
                    self._start_tricks()
                return
            else:
                return

    def _ask(self, seat: int, stage: int) -> None:
        if stage not in TRANSITIONS[self.stage]:  # inlined _set_stage: once per decision
            check_transition(self.stage, stage)
        self.current_seat = seat
        self.stage = stage
        self.decision_number += 1

    def _forced_enter(self, position: int, seat: int) -> bool:
        """Variant rules that make a non-dealer (at ``position``) enter."""
        after = self._auto_enter_after
        if after and self._fold_streaks[seat] >= after:
            return True
        n = self.n_seats
        if self._last_two_forced and n >= 3 and position == n - 2:
            status, order = self.hand.status, self.hand.speaking_order
            return all(status[order[i]] == FOLDED for i in range(n - 2))
        return False

    def _step_decide(self, events: list[MuushigEvent]) -> bool:
        hand = self.hand
        n, order, status = self.n_seats, hand.speaking_order, hand.status
        while hand.decide_position < n:
            position = hand.decide_position
            seat = order[position]
            if position < n - 1:
                if not self._forced_enter(position, seat):
                    self._ask(seat, DECIDE)
                    return True
            else:  # the dealer
                entered = sum(1 for i in range(n - 1) if status[order[i]] == ENTERED)
                if entered == 0:
                    self._all_folded(events)
                    return False
                after = self._auto_enter_after
                forced = entered == 1 or (after and self._fold_streaks[seat] >= after)
                if not forced:
                    self._ask(seat, DECIDE)
                    return True
            self._enter(seat, True, events)
            hand.decide_position += 1
        self._setup_exchange()
        return False

    def _enter(self, seat: int, forced: bool, events: list[MuushigEvent]) -> None:
        self.hand.status[seat] = ENTERED
        self._fold_streaks[seat] = 0
        events.append(Decision(seat, "enter", forced))

    def _all_folded(self, events: list[MuushigEvent]) -> None:
        """§4.3: the unasked dealer takes all five tricks at once."""
        dealer, hand = self._dealer, self.hand
        hand.status[dealer] = ENTERED
        self._fold_streaks[dealer] = 0
        hand.tricks[dealer] = HAND_SIZE
        self._scores[dealer] -= HAND_SIZE
        self.current_seat = None
        events.append(AllFolded(dealer, tuple(self._scores)))
        self._end_hand(events, (), dealer if self._scores[dealer] <= 0 else None)

    def _setup_exchange(self) -> None:
        hand = self.hand
        entered = [s for s in hand.speaking_order if hand.status[s] == ENTERED]
        hand.entered = entered
        k = len(entered)
        for i, seat in enumerate(entered):
            hand.next_entered[seat] = entered[(i + 1) % k]
        hand.exchange_position = 0
        self._set_stage(EXCHANGE)

    def _step_exchange(self) -> bool:
        hand = self.hand
        left = hand.stock_left
        if hand.exchange_position < len(hand.entered) and left > 0:  # §5.2: an empty stock ends it
            hand.exchange_limit = min(HAND_SIZE, left)
            self._ask(hand.entered[hand.exchange_position], EXCHANGE)
            return True
        self._set_stage(TAKE)
        return False

    def _start_tricks(self) -> None:
        hand = self.hand
        hand.trick = []
        hand.leader = hand.entered[0]  # §7.1: first entered seat left of the dealer
        self._ask(hand.leader, PLAY)

    # -------------------------------------------------------- fast API
    def legal_mask(self) -> int:
        """Playable cards as a mask (play phase only): a few table look-ups,
        made again on each call rather than kept."""
        hand = self.hand
        cards = hand.hands[self.current_seat]  # type: ignore[index]
        if hand.trick:
            return follow_mask(cards, hand.led_suit, hand.trump, hand.winning_card, hand.trumped)
        return lead_mask(cards, hand.trump, not hand.played, self._trump_ace_first)

    def legal_codes(self) -> tuple[int, ...]:
        stage = self.stage
        if self.current_seat is None:
            return ()
        if stage == PLAY:
            return mask_cards(self.legal_mask())
        if stage == DECIDE:
            return (ENTER, FOLD)
        cards = self.hand.hands[self.current_seat]
        if stage == EXCHANGE:
            return POS_SETS[(cards.bit_count(), self.hand.exchange_limit)]
        return (DECLINE, *mask_cards(cards))

    def apply_code(self, code: int) -> list[MuushigEvent]:
        """Apply a code from ``legal_codes()`` (checked cheaply, no reasons)."""
        if self.stage == PLAY:
            return self._play(code)
        seat = self.current_seat
        if seat is None:
            raise NotYourTurnError("the match is over" if self._started else "the match has not started")
        events: list[MuushigEvent] = []
        stage = self.stage
        if stage == DECIDE:
            if code == ENTER:
                self._enter(seat, False, events)
            elif code == FOLD:
                self.hand.status[seat] = FOLDED
                self._fold_streaks[seat] += 1
                events.append(Decision(seat, "fold", False))
            else:
                raise IllegalActionError(f"bad decide code {code!r}")
            self.hand.decide_position += 1
        elif stage == EXCHANGE:
            self._exchange(seat, code, events)
        else:
            self._take(seat, code, events)
            self._start_tricks()
            return events
        self._advance(events)
        return events

    def _exchange(self, seat: int, code: int, events: list[MuushigEvent]) -> None:
        hand = self.hand
        cards = mask_cards(hand.hands[seat])
        if code not in POS_SETS[(len(cards), hand.exchange_limit)]:
            raise IllegalActionError(f"bad exchange code {code!r}")
        discard = 0
        for position, card in enumerate(cards):
            if code >> position & 1:
                discard |= BIT[card]
        k = code.bit_count()
        drawn_before = hand.stock_drawn
        drawn = hand.stock[drawn_before : drawn_before + k]
        hand.stock_drawn = drawn_before + k
        mask = hand.hands[seat] ^ discard
        for card in drawn:
            mask |= BIT[card]
        hand.hands[seat] = mask
        hand.discards[seat] |= discard
        hand.exchanges[seat] = k
        hand.exchange_position += 1
        events.append(Exchange(seat, discard, drawn))

    def _take(self, seat: int, code: int, events: list[MuushigEvent]) -> None:
        hand = self.hand
        if code != DECLINE:
            if not 0 <= code < 32 or not hand.hands[seat] & BIT[code]:
                raise IllegalActionError(f"bad take code {code!r}")
            hand.hands[seat] ^= BIT[code] | BIT[hand.face_up]
            hand.take_discard = code
            hand.face_up_taken = True
        events.append(Take(seat, None if code == DECLINE else code))

    def _play(self, card: int) -> list[MuushigEvent]:
        seat = self.current_seat
        mask = self.legal_mask()
        if card < 0 or not mask >> card & 1:
            raise IllegalActionError(f"card code {card!r} is not playable now")
        hand = self.hand
        hand.hands[seat] ^= BIT[card]  # type: ignore[index]
        events: list[MuushigEvent] = [Play(seat, card)]  # type: ignore[arg-type]
        trick = hand.trick
        suit = card >> 3
        if trick:
            if suit == hand.trump:
                if not hand.trumped:
                    hand.trumped = True
                    hand.winning_card = card
                    hand.winning_seat = seat  # type: ignore[assignment]
                elif card > hand.winning_card:
                    hand.winning_card = card
                    hand.winning_seat = seat  # type: ignore[assignment]
            elif suit == hand.led_suit and not hand.trumped and card > hand.winning_card:
                hand.winning_card = card
                hand.winning_seat = seat  # type: ignore[assignment]
        else:
            hand.led_suit = suit
            hand.winning_card = card
            hand.winning_seat = seat  # type: ignore[assignment]
            hand.trumped = suit == hand.trump
        trick.append((seat, card))  # type: ignore[arg-type]
        if len(trick) < len(hand.entered):
            self.current_seat = hand.next_entered[seat]  # type: ignore[index]
            self.decision_number += 1
            return events
        self._finish_trick(events)
        return events

    def _finish_trick(self, events: list[MuushigEvent]) -> None:
        """§7.4 winner, §8.1 −1 at once, §8.3 the round may end right here."""
        hand = self.hand
        winner = hand.winning_seat
        hand.tricks[winner] += 1
        scores = self._scores
        scores[winner] -= 1
        cards = tuple(hand.trick)
        hand.played.append((hand.leader, cards, winner))  # type: ignore[arg-type]
        events.append(Trick(winner, cards, tuple(scores)))
        if scores[winner] <= 0:
            self.current_seat = None
            self._end_hand(events, (), winner)
        elif len(hand.played) == HAND_SIZE:
            tricks = hand.tricks
            muushig = tuple(s for s in sorted(hand.entered) if tricks[s] == 0)
            for seat in muushig:
                scores[seat] += MUUSHIG_BONUS
            self.current_seat = None
            self._end_hand(events, muushig, None)
        else:
            hand.trick = []
            hand.leader = self.current_seat = winner
            self.decision_number += 1
            return
        self._advance(events)

    def _end_hand(self, events: list[MuushigEvent], muushig: tuple[int, ...], winner: int | None) -> None:
        events.append(HandEnd(tuple(self.hand.tricks), muushig, tuple(self._scores)))
        if winner is None and self._hand_number + 1 >= self._max_hands:
            # §8.5 safety bound: lowest score wins, ties to the lower seat.
            scores = self._scores
            winner = min(range(self.n_seats), key=lambda s: (scores[s], s))
        if winner is not None:
            self._end_round(events, winner)
        else:
            self._hand_number += 1
            self._dealer = (self._dealer + 1) % self.n_seats
            self._deal(events)

    def _end_round(self, events: list[MuushigEvent], winner: int) -> None:
        self._stars[winner] += 1
        self._final_scores.append(tuple(self._scores))
        events.append(RoundEnd(self._round_number, winner, tuple(self._scores)))
        self._round_number += 1
        if self._round_number < self.n_rounds:
            self._begin_round(events)
        else:
            self._set_stage(OVER)
            self.current_seat = None
            self.decision_number += 1  # no decision pending: what was checked is void

    # ----------------------------------------------------------- wire API
    def legal_actions(self) -> list[Any]:
        return self._wire.legal_actions()

    def check_action(self, action: Any) -> CheckedAction[int]:
        """``action`` checked for the pending decision, with its fast code."""
        seat = self.current_seat
        if seat is None:
            raise NotYourTurnError("the match is over" if self._started else "the match has not started")
        canonical, code = self._wire.check(action)
        return CheckedAction(self, seat, self.decision_number, canonical, code)

    def apply(self, checked: CheckedAction[int]) -> list[MuushigEvent]:
        # Every state change that ends a decision counts it, so the decision
        # number tells a check of the pending decision from any other.
        if checked.decision != self.decision_number or checked.engine is not self:
            raise stale_action(checked, self, self.decision_number)
        return self.apply_code(checked.detail)

    def play(self, action: Any) -> list[MuushigEvent]:
        # Checked and applied in one go: nothing can come between, so no
        # CheckedAction is made (the wire check raises if no seat is to act).
        return self.apply_code(self._wire.check(action)[1])

    def default_action(self) -> Any:
        return self._wire.default_action()

    # ------------------------------------------------------- read-only
    @property
    def deal_label(self) -> dict[str, int]:
        """Names the deal being made (protocol §5): a keyed deck source gives
        duplicate rotations the same deck for the same (round, hand)."""
        return {"round": self._round_number, "hand": self._hand_number}

    def deals(self) -> list[DealInfo]:
        return [d.deal for d in self._deal_events]

    def result(self) -> dict[str, Any]:
        """protocol §6 ``result``; ranking by rules §9."""
        if not self.finished:
            raise GameError("the match is not finished: no result yet")
        return match_result(self._stars, self._final_scores)

    def observation(self, seat: int) -> dict[str, Any]:
        """protocol §3 ``state`` for ``seat``: only what rules §10 lets it know."""
        if not 0 <= seat < self.n_seats:
            raise GameError(f"no seat {seat!r} at a {self.n_seats}-seat table")
        return self._observer.observe(self, seat)
