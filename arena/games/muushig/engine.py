"""The Muushig state machine: a whole match of rounds, hands and tricks.

Pure and sans-IO (see ``arena.games.base``): chance enters only as deck
orders, taken from an explicit list or from one ``rng.shuffle`` of a fresh
canonical deck per hand, so a seed fixes the sequence of decks whatever the
players do, and (decks, actions) replays a match exactly.

Two faces:

* the wire API of :class:`GameEngine` (``legal_actions``, ``check_action``,
  ``apply``...), in protocol strings; see ``arena.games.muushig.wire``;
* a fast API for benchmarks and simulations, in small ints:
  ``legal_codes()`` / ``apply_code(code)``. Codes per phase:
  decide ``ENTER``/``FOLD``; exchange a bit set over the *positions* of the
  hand's cards in canonical order (bit i = the i-th lowest card is
  discarded); take ``DECLINE`` or a card index; play a card index.

Rules sections (§) refer to the arena's rules page.
"""

from __future__ import annotations

import random
from typing import Any

from arena.games.base import GameError, IllegalActionError, NotYourTurnError, RuleConfigError, SequentialGame
from arena.games.muushig.cards import BIT, CARD_INDEX, deck_for, mask_cards
from arena.games.muushig.events import (
    AllFolded,
    Deal,
    Decision,
    Exchange,
    HandEnd,
    HandStart,
    MuushigEvent,
    Play,
    RoundEnd,
    RoundStart,
    Take,
    Trick,
)
from arena.games.muushig.legality import follow_mask, lead_mask
from arena.games.muushig.options import MuushigRules
from arena.games.muushig.phases import (
    DECIDE,
    DECLINE,
    ENTER,
    ENTERED,
    EXCHANGE,
    FOLD,
    FOLDED,
    HAND_SIZE,
    MUUSHIG_BONUS,
    OVER,
    PHASES,
    PLAY,
    POS_SETS,
    START_SCORE,
    TAKE,
    WAITING,
)
from arena.games.muushig.views import match_result, observe
from arena.games.muushig.wire import WireMixin


class MuushigEngine(SequentialGame, WireMixin):
    """One Muushig match. Create, call ``start()``, then ``apply`` actions of
    ``current_seat`` until ``finished``."""

    game = "muushig"

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
        self._template = deck_for(n)
        self._decks = [self._check_deck(i, d) for i, d in enumerate(decks or ())]
        self._deck_pos = 0
        # Explicit decks without an rng mean "replay": running out is an error.
        self._rng = rng if rng is not None or decks else random.Random()
        self._max_hands = opts.max_hands
        self._auto = opts.auto_enter_after_folds
        self._last_two = opts.last_two_forced
        self._ace_first = opts.trump_ace_first_lead
        self._started = False
        self._stage = OVER
        self._seat: int | None = None
        self._round = 0
        self._hand = 0
        self._dealer = 0
        self._scores = [START_SCORE] * n
        self._stars = [0] * n
        self._final: list[tuple[int, ...]] = []
        self._streak = [0] * n
        self._deal_events: list[Deal] = []
        self._reset_hand()

    # ----------------------------------------------------------- set-up
    def _check_deck(self, i: int, deck: Any) -> tuple[int, ...]:
        want = self._template
        try:
            codes = tuple(CARD_INDEX[c] for c in deck)
        except (KeyError, TypeError):
            raise RuleConfigError(f"deck {i} holds a malformed card; cards are strings like 'AS', 'TH'") from None
        if len(codes) != len(want) or set(codes) != set(want):
            raise RuleConfigError(
                f"deck {i} is not an order of the {len(want)} cards of a {self.n_seats}-player game"
            )
        return codes

    def _next_deck(self) -> tuple[int, ...]:
        if self._deck_pos < len(self._decks):
            deck = self._decks[self._deck_pos]
            self._deck_pos += 1
            return deck
        if self._rng is None:
            raise GameError(f"no deck left: the match needs deal number {self._deck_pos + 1}")
        deck = list(self._template)
        self._rng.shuffle(deck)  # exactly one shuffle per deal
        self._deck_pos += 1
        return tuple(deck)

    def _reset_hand(self) -> None:
        n = self.n_seats
        self._hands = [0] * n
        self._face_up = 0
        self._trump = 0
        self._stock: tuple[int, ...] = ()
        self._stock_pos = 0
        self._status = [WAITING] * n
        self._order: list[int] = []
        self._di = 0
        self._entered: list[int] = []
        self._next: list[int] = [0] * n
        self._n_entered = 0
        self._xi = 0
        self._limit = 0
        self._exchanges: list[int | None] = [None] * n
        self._discards = [0] * n
        self._take_discard: int | None = None
        self._taken = False
        self._tricks = [0] * n
        self._played: list[tuple[int, tuple[tuple[int, int], ...], int]] = []
        self._trick: list[tuple[int, int]] = []
        self._leader: int | None = None
        self._led = 0
        self._win = 0
        self._wseat = 0
        self._trumped = False
        self._lmask = -1
        self._legal_wire: list[Any] | None = None

    # ------------------------------------------------------- properties
    @property
    def finished(self) -> bool:
        return self._started and self._stage == OVER

    @property
    def current_seat(self) -> int | None:
        return self._seat

    @property
    def phase(self) -> str | None:
        return PHASES[self._stage] if self._seat is not None else None

    # ------------------------------------------------------------ flow
    def start(self) -> list[MuushigEvent]:
        if self._started:
            raise GameError("the match has already started")
        self._started = True
        ev: list[MuushigEvent] = []
        self._begin_round(ev)
        self._advance(ev)
        return ev

    def _begin_round(self, ev: list) -> None:
        n = self.n_seats
        self._hand = 0
        self._dealer = self._round % n  # §2: round r is first dealt by seat r
        self._scores = [START_SCORE] * n
        self._streak = [0] * n
        ev.append(RoundStart(self._round, self._dealer, tuple(self._scores)))
        self._deal(ev)

    def _deal(self, ev: list) -> None:
        """§3: card i to seat (dealer+1+i) mod n, then face-up, then stock."""
        deck = self._next_deck()
        n, d = self.n_seats, self._dealer
        self._reset_hand()
        dealt = HAND_SIZE * n
        hands = self._hands
        for j in range(n):
            m = 0
            for c in deck[j:dealt:n]:
                m |= BIT[c]
            hands[(d + 1 + j) % n] = m
        self._face_up = deck[dealt]
        self._trump = deck[dealt] >> 3
        self._stock = deck[dealt + 1 :]
        self._order = [(d + 1 + j) % n for j in range(n)]  # dealer speaks last
        self._stage = DECIDE
        deal = Deal(self._round, self._hand, deck)
        self._deal_events.append(deal)
        ev.append(deal)
        ev.append(HandStart(self._round, self._hand, d, self._face_up, tuple(hands)))

    def _advance(self, ev: list) -> None:
        """Run every automatic step until a seat must choose or the match ends."""
        while True:
            st = self._stage
            if st == DECIDE:
                if self._step_decide(ev):
                    return
            elif st == EXCHANGE:
                if self._step_exchange():
                    return
            elif st == TAKE:
                if self._entered[-1] == self._dealer:
                    self._ask(self._dealer, TAKE)  # §6: offered to an entered dealer
                else:
                    self._start_tricks()
                return
            else:
                return

    def _ask(self, seat: int, stage: int) -> None:
        self._seat = seat
        self._stage = stage
        self._lmask = -1
        self._legal_wire = None

    def _forced_enter(self, j: int, seat: int) -> bool:
        """Variant rules that make a non-dealer (position j) enter."""
        if self._auto and self._streak[seat] >= self._auto:
            return True
        n = self.n_seats
        if self._last_two and n >= 3 and j == n - 2:
            st, order = self._status, self._order
            return all(st[order[i]] == FOLDED for i in range(n - 2))
        return False

    def _step_decide(self, ev: list) -> bool:
        n, order, st = self.n_seats, self._order, self._status
        while self._di < n:
            j = self._di
            seat = order[j]
            if j < n - 1:
                if not self._forced_enter(j, seat):
                    self._ask(seat, DECIDE)
                    return True
            else:  # the dealer
                entered = sum(1 for i in range(n - 1) if st[order[i]] == ENTERED)
                if entered == 0:
                    self._all_folded(ev)
                    return False
                forced = entered == 1 or (self._auto and self._streak[seat] >= self._auto)
                if not forced:
                    self._ask(seat, DECIDE)
                    return True
            self._enter(seat, True, ev)
            self._di += 1
        self._setup_exchange()
        return False

    def _enter(self, seat: int, forced: bool, ev: list) -> None:
        self._status[seat] = ENTERED
        self._streak[seat] = 0
        ev.append(Decision(seat, "enter", forced))

    def _all_folded(self, ev: list) -> None:
        """§4.3: the unasked dealer takes all five tricks at once."""
        d = self._dealer
        self._status[d] = ENTERED
        self._streak[d] = 0
        self._tricks[d] = HAND_SIZE
        self._scores[d] -= HAND_SIZE
        self._seat = None
        ev.append(AllFolded(d, tuple(self._scores)))
        self._end_hand(ev, (), d if self._scores[d] <= 0 else None)

    def _setup_exchange(self) -> None:
        st = self._status
        entered = [s for s in self._order if st[s] == ENTERED]
        self._entered = entered
        self._n_entered = k = len(entered)
        for i, s in enumerate(entered):
            self._next[s] = entered[(i + 1) % k]
        self._xi = 0
        self._stage = EXCHANGE

    def _step_exchange(self) -> bool:
        left = len(self._stock) - self._stock_pos
        if self._xi < self._n_entered and left > 0:  # §5.2: an empty stock ends the exchange
            self._limit = min(HAND_SIZE, left)
            self._ask(self._entered[self._xi], EXCHANGE)
            return True
        self._stage = TAKE
        return False

    def _start_tricks(self) -> None:
        self._trick = []
        self._leader = self._entered[0]  # §7.1: first entered seat left of the dealer
        self._ask(self._leader, PLAY)

    # -------------------------------------------------------- fast API
    def legal_mask(self) -> int:
        """Playable cards as a mask (play phase only)."""
        lm = self._lmask
        if lm < 0:
            hand = self._hands[self._seat]  # type: ignore[index]
            if self._trick:
                lm = follow_mask(hand, self._led, self._trump, self._win, self._trumped)
            else:
                lm = lead_mask(hand, self._trump, not self._played, self._ace_first)
            self._lmask = lm
        return lm

    def legal_codes(self) -> tuple[int, ...]:
        st = self._stage
        if self._seat is None:
            return ()
        if st == PLAY:
            return mask_cards(self.legal_mask())
        if st == DECIDE:
            return (ENTER, FOLD)
        if st == EXCHANGE:
            return POS_SETS[(self._hands[self._seat].bit_count(), self._limit)]
        return (DECLINE, *mask_cards(self._hands[self._seat]))

    def apply_code(self, code: int) -> list[MuushigEvent]:
        """Apply a code from ``legal_codes()`` (checked cheaply, no reasons)."""
        if self._stage == PLAY:
            return self._play(code)
        seat = self._seat
        if seat is None:
            raise NotYourTurnError("the match is over" if self._started else "the match has not started")
        ev: list[MuushigEvent] = []
        st = self._stage
        if st == DECIDE:
            if code == ENTER:
                self._enter(seat, False, ev)
            elif code == FOLD:
                self._status[seat] = FOLDED
                self._streak[seat] += 1
                ev.append(Decision(seat, "fold", False))
            else:
                raise IllegalActionError(f"bad decide code {code!r}")
            self._di += 1
        elif st == EXCHANGE:
            self._exchange(seat, code, ev)
        else:
            self._take(seat, code, ev)
            self._start_tricks()
            return ev
        self._advance(ev)
        return ev

    def _exchange(self, seat: int, code: int, ev: list) -> None:
        cards = mask_cards(self._hands[seat])
        if code not in POS_SETS[(len(cards), self._limit)]:
            raise IllegalActionError(f"bad exchange code {code!r}")
        discard = 0
        for p, c in enumerate(cards):
            if code >> p & 1:
                discard |= BIT[c]
        k = code.bit_count()
        pos = self._stock_pos
        drawn = self._stock[pos : pos + k]
        self._stock_pos = pos + k
        hand = self._hands[seat] ^ discard
        for c in drawn:
            hand |= BIT[c]
        self._hands[seat] = hand
        self._discards[seat] |= discard
        self._exchanges[seat] = k
        self._xi += 1
        ev.append(Exchange(seat, discard, drawn))

    def _take(self, seat: int, code: int, ev: list) -> None:
        if code != DECLINE:
            if not 0 <= code < 32 or not self._hands[seat] & BIT[code]:
                raise IllegalActionError(f"bad take code {code!r}")
            self._hands[seat] ^= BIT[code] | BIT[self._face_up]
            self._take_discard = code
            self._taken = True
        ev.append(Take(seat, None if code == DECLINE else code))

    def _play(self, card: int) -> list[MuushigEvent]:
        seat = self._seat
        lm = self._lmask
        if lm < 0:
            lm = self.legal_mask()
        if card < 0 or not lm >> card & 1:
            raise IllegalActionError(f"card code {card!r} is not playable now")
        self._hands[seat] ^= BIT[card]  # type: ignore[index]
        ev: list[MuushigEvent] = [Play(seat, card)]  # type: ignore[arg-type]
        trick = self._trick
        s = card >> 3
        if trick:
            if s == self._trump:
                if not self._trumped:
                    self._trumped = True
                    self._win = card
                    self._wseat = seat
                elif card > self._win:
                    self._win = card
                    self._wseat = seat
            elif s == self._led and not self._trumped and card > self._win:
                self._win = card
                self._wseat = seat
        else:
            self._led = s
            self._win = card
            self._wseat = seat
            self._trumped = s == self._trump
        trick.append((seat, card))  # type: ignore[arg-type]
        if len(trick) < self._n_entered:
            self._seat = self._next[seat]  # type: ignore[index]
            self._lmask = -1
            self._legal_wire = None
            return ev
        self._finish_trick(ev)
        return ev

    def _finish_trick(self, ev: list) -> None:
        """§7.4 winner, §8.1 −1 at once, §8.3 the round may end right here."""
        w = self._wseat
        self._tricks[w] += 1
        sc = self._scores
        sc[w] -= 1
        cards = tuple(self._trick)
        self._played.append((self._leader, cards, w))  # type: ignore[arg-type]
        ev.append(Trick(w, cards, tuple(sc)))
        if sc[w] <= 0:
            self._seat = None
            self._end_hand(ev, (), w)
        elif len(self._played) == HAND_SIZE:
            tricks = self._tricks
            muushig = tuple(s for s in sorted(self._entered) if tricks[s] == 0)
            for s in muushig:
                sc[s] += MUUSHIG_BONUS
            self._seat = None
            self._end_hand(ev, muushig, None)
        else:
            self._trick = []
            self._leader = self._seat = w
            self._lmask = -1
            self._legal_wire = None
            return
        self._advance(ev)

    def _end_hand(self, ev: list, muushig: tuple[int, ...], winner: int | None) -> None:
        ev.append(HandEnd(tuple(self._tricks), muushig, tuple(self._scores)))
        if winner is None and self._hand + 1 >= self._max_hands:
            # §8.5 safety bound: lowest score wins, ties to the lower seat.
            sc = self._scores
            winner = min(range(self.n_seats), key=lambda s: (sc[s], s))
        if winner is not None:
            self._end_round(ev, winner)
        else:
            self._hand += 1
            self._dealer = (self._dealer + 1) % self.n_seats
            self._deal(ev)

    def _end_round(self, ev: list, winner: int) -> None:
        self._stars[winner] += 1
        self._final.append(tuple(self._scores))
        ev.append(RoundEnd(self._round, winner, tuple(self._scores)))
        self._round += 1
        if self._round < self.n_rounds:
            self._begin_round(ev)
        else:
            self._stage = OVER
            self._seat = None

    # ------------------------------------------------------- read-only
    def deals(self) -> list:
        return [d.deal for d in self._deal_events]

    def result(self) -> dict[str, Any]:
        """protocol §6 ``result``; ranking by rules §9."""
        if not self.finished:
            raise GameError("the match is not finished: no result yet")
        return match_result(self._stars, self._final)

    def observation(self, seat: int) -> dict[str, Any]:
        """protocol §3 ``state`` for ``seat``: only what rules §10 lets it know."""
        if not 0 <= seat < self.n_seats:
            raise GameError(f"no seat {seat!r} at a {self.n_seats}-seat table")
        return observe(self, seat)
