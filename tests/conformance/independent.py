"""A second, independent reading of the arena's Muushig rules page and of the
protocol page (§3 events, legal lists and state; §6 result).

Written from the two pages alone, without looking at the engine, so that a
misreading shared by the engine and its own reference shows up as a
difference. It is deliberately plain and slow: the match is one generator
that reads top to bottom like the rules (round -> hand -> decisions ->
exchange -> take -> tricks) and yields a request whenever a seat must choose.

Rule sections quoted in comments refer to the rules page (§n) and the
protocol page (P§n).
"""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass
from typing import Any, Generator

RANKS = "789TJQKA"
SUITS = "HSDC"
N_ROUNDS = 5
HAND_SIZE = 5
N_TRICKS = 5
START_SCORE = 15

Wire = dict[str, Any]


def rank_of(card: str) -> int:
    return RANKS.index(card[0])


def suit_of(card: str) -> str:
    return card[1]


def canonical_key(card: str) -> tuple[int, int]:
    # §1.3: by suit H, S, D, C, then by rank ascending.
    return (SUITS.index(card[1]), RANKS.index(card[0]))


def canonical(cards: list[str]) -> list[str]:
    return sorted(cards, key=canonical_key)


def ranks_for_players(players: int) -> str:
    # Variants: 4 players drop the 7s, 3 the 7s and 8s, 2 the 7s, 8s and 9s.
    return RANKS[5 - players:]


def full_deck(players: int = 5) -> list[str]:
    return [r + s for s in SUITS for r in ranks_for_players(players)]


@dataclass
class Request:
    seat: int
    phase: str
    legal: list[Any]


class Independent:
    """One match. ``decks`` are the deck orders of the hands, in order."""

    def __init__(self, rules: Wire | None, decks: list[list[str]]) -> None:
        rules = dict(rules or {})
        self.players: int = int(rules.get("players", 5))
        self.max_hands: int = int(rules.get("max_hands", 200))
        self.last_two_forced: bool = bool(rules.get("last_two_forced", False))
        auto = rules.get("auto_enter_after_folds", 0)
        # The flag may be given as a count (3) or as True (meaning 3).
        self.auto_enter_after: int = 3 if auto is True else int(auto or 0)
        self.trump_ace_first_lead: bool = bool(rules.get("trump_ace_first_lead", False))
        self.decks = [list(d) for d in decks]
        self.deck_index = 0
        n = self.players
        self.n = n
        # Per-seat outboxes of event payloads (what seat k receives).
        self.outbox: list[list[Wire]] = [[] for _ in range(n)]
        self.stars = [0] * n
        self.final_scores: list[list[int]] = [[] for _ in range(n)]
        # Observable state for `state` (P§3).
        self.round = 0
        self.hand = 0
        self.dealer = 0
        self.trump: str | None = None
        self.face_up: str | None = None
        self.hands: list[list[str]] = [[] for _ in range(n)]
        self.scores = [START_SCORE] * n
        self.status = ["waiting"] * n
        self.stock: list[str] = []
        self.face_up_taken = False
        self.trick: list[list[Any]] = []
        self.leader: int | None = None
        self.tricks = [0] * n
        self.played: list[Wire] = []
        self.pending: Request | None = None
        self.finished = False
        # Which rule situations this match went through (test coverage).
        self.seen: Counter[str] = Counter()
        self._flow = self._match()

    # ----- driving -------------------------------------------------------
    def start(self) -> list[list[Wire]]:
        return self._advance(None, first=True)

    def act(self, action: Any) -> list[list[Wire]]:
        assert self.pending is not None, "match is over"
        return self._advance(action, first=False)

    def _advance(self, action: Any, first: bool) -> list[list[Wire]]:
        self.outbox = [[] for _ in range(self.n)]
        try:
            self.pending = next(self._flow) if first else self._flow.send(action)
        except StopIteration:
            self.pending = None
            self.finished = True
        return self.outbox

    def legal(self) -> list[Any]:
        assert self.pending is not None
        return self.pending.legal

    def default(self) -> Any:
        # §11.
        req = self.pending
        assert req is not None
        if req.phase == "decide":
            return "fold" if "fold" in req.legal else "enter"
        if req.phase == "exchange":
            return []
        if req.phase == "take":
            return None
        return req.legal[0]

    def state(self, seat: int) -> Wire:
        return {
            "round": self.round,
            "hand": self.hand,
            "dealer": self.dealer,
            "seat": seat,
            "trump": self.trump,
            "face_up": self.face_up,
            "cards": canonical(self.hands[seat]),
            "scores": list(self.scores),
            "stars": list(self.stars),
            "status": list(self.status),
            "stock": len(self.stock),
            "face_up_taken": self.face_up_taken,
            "trick": [list(x) for x in self.trick],
            "leader": self.leader,
            "tricks": list(self.tricks),
            "played": [
                {"leader": p["leader"], "cards": [list(x) for x in p["cards"]], "winner": p["winner"]}
                for p in self.played
            ],
        }

    def result(self) -> Wire:
        # §9 / P§6.
        sums = [sum(f) for f in self.final_scores]
        ranks = []
        for s in range(self.n):
            better = sum(
                1
                for o in range(self.n)
                if (self.stars[o] > self.stars[s])
                or (self.stars[o] == self.stars[s] and sums[o] < sums[s])
            )
            ranks.append(better + 1)
        return {
            "stars": list(self.stars),
            "final_scores": [list(f) for f in self.final_scores],
            "sums": sums,
            "ranks": ranks,
        }

    # ----- emitting ------------------------------------------------------
    def _public(self, payload: Wire) -> None:
        for s in range(self.n):
            self.outbox[s].append(dict(payload))

    def _private(self, per_seat: list[Wire]) -> None:
        for s in range(self.n):
            self.outbox[s].append(per_seat[s])

    def _ask(self, seat: int, phase: str, legal: list[Any]) -> Generator[Request, Any, Any]:
        action = yield Request(seat, phase, legal)
        if phase == "exchange":
            chosen = canonical(list(action))
            assert chosen in legal, (action, legal)
            return chosen
        assert action in legal, (action, legal)
        return action

    # ----- the match -----------------------------------------------------
    def _match(self) -> Generator[Request, Any, None]:
        n = self.n
        # §2 says five rounds, the first dealt by seat r. For fewer players (a
        # variant) the rules page is silent; seed 002 gives one round per
        # player ("тоглогчдын тоогоор"), so every seat deals first once.
        for r in range(min(N_ROUNDS, n)):
            self.round = r
            self.scores = [START_SCORE] * n
            self.fold_streak = [0] * n
            first_dealer = r % n
            self._public({"kind": "round_start", "round": r, "dealer": first_dealer,
                          "scores": list(self.scores)})
            dealer = first_dealer
            hand = 0
            while True:
                winner = yield from self._hand(r, hand, dealer)
                if winner is not None:
                    break
                hand += 1
                if hand >= self.max_hands:
                    # §8.5: lowest score wins, ties -> lower seat number.
                    winner = min(range(n), key=lambda s: (self.scores[s], s))
                    tied = self.scores.count(self.scores[winner]) > 1
                    self.seen["max_hands_tie" if tied else "max_hands"] += 1
                    break
                dealer = (dealer + 1) % n
            self.stars[winner] += 1
            for s in range(n):
                self.final_scores[s].append(self.scores[s])
            self._public({"kind": "round_end", "round": r, "winner": winner,
                          "scores": list(self.scores)})

    def _round_over(self) -> int | None:
        low = [s for s in range(self.n) if self.scores[s] <= 0]
        assert len(low) <= 1
        return low[0] if low else None

    def _hand_end(self, muushig: list[int]) -> None:
        self._public({"kind": "hand_end", "tricks": list(self.tricks),
                      "muushig": list(muushig), "scores": list(self.scores)})

    def _hand(self, r: int, h: int, dealer: int) -> Generator[Request, Any, int | None]:
        n = self.n
        self.hand = h
        self.dealer = dealer
        if self.deck_index >= len(self.decks):
            raise ValueError(f"ran out of deck orders after {len(self.decks)} hands; pass more")
        deck = self.decks[self.deck_index]
        self.deck_index += 1
        assert sorted(deck) == sorted(full_deck(n)), deck
        # §3.2 deal.
        self.hands = [[] for _ in range(n)]
        for i in range(HAND_SIZE * n):
            self.hands[(dealer + 1 + i) % n].append(deck[i])
        self.face_up = deck[HAND_SIZE * n]
        self.trump = suit_of(self.face_up)
        self.stock = list(deck[HAND_SIZE * n + 1:])
        self.status = ["waiting"] * n
        self.face_up_taken = False
        self.trick = []
        self.leader = None
        self.tricks = [0] * n
        self.played = []
        self._private([
            {"kind": "hand_start", "round": r, "hand": h, "dealer": dealer,
             "face_up": self.face_up, "trump": self.trump,
             "cards": canonical(self.hands[s])}
            for s in range(n)
        ])

        # §4 decisions.
        non_dealers = [(dealer + k) % n for k in range(1, n)]
        for pos, seat in enumerate(non_dealers, start=1):
            forced = False
            if self.auto_enter_after and self.fold_streak[seat] >= self.auto_enter_after:
                forced = True
            # Variant: with five seats "the first three after the dealer fold
            # -> the fourth and the dealer enter". Seed 000 says "the last
            # two", which is how this reads for fewer seats (ambiguous there;
            # with two seats nobody precedes, and nothing is forced).
            if (self.last_two_forced and n >= 3 and pos == n - 1
                    and all(self.status[non_dealers[i]] == "folded" for i in range(n - 2))):
                self.seen["last_two_forced"] += 1
                forced = True
            if forced:
                self.seen["non_dealer_forced"] += 1
                choice = "enter"
            else:
                choice = yield from self._ask(seat, "decide", ["enter", "fold"])
            self._decide(seat, choice, forced)

        entered_others = [s for s in non_dealers if self.status[s] == "entered"]
        if not entered_others:
            # §4.3: dealer not asked, takes all five tricks at once.
            self.tricks[dealer] = N_TRICKS
            self.scores[dealer] -= N_TRICKS
            if self.fold_streak[dealer]:
                self.seen["all_folded_restarts_fold_count"] += 1
            self.fold_streak[dealer] = 0
            self.seen["all_folded"] += 1
            if self._round_over() is not None:
                self.seen["round_ends_on_all_folded"] += 1
            self._public({"kind": "all_folded", "dealer": dealer, "scores": list(self.scores)})
            self._hand_end([])
            return self._round_over()
        forced = len(entered_others) == 1 or (
            bool(self.auto_enter_after) and self.fold_streak[dealer] >= self.auto_enter_after)
        if forced:
            self.seen["dealer_forced"] += 1
            if len(entered_others) > 1:
                self.seen["dealer_forced_by_auto_enter"] += 1
            choice = "enter"
        else:
            choice = yield from self._ask(dealer, "decide", ["enter", "fold"])
        self._decide(dealer, choice, forced)

        entered = [(dealer + k) % n for k in range(1, n + 1) if self.status[(dealer + k) % n] == "entered"]

        # §5 exchange.
        for i, seat in enumerate(entered):
            if not self.stock:
                self.seen["exchange_cut_short"] += 1
                break
            limit = min(HAND_SIZE, len(self.stock))
            if limit < HAND_SIZE:
                self.seen["exchange_limited_by_stock"] += 1
            mine = canonical(self.hands[seat])
            legal = [list(c) for k in range(limit + 1) for c in itertools.combinations(mine, k)]
            discard = yield from self._ask(seat, "exchange", legal)
            k = len(discard)
            drawn = self.stock[:k]
            self.stock = self.stock[k:]
            for c in discard:
                self.hands[seat].remove(c)
            self.hands[seat].extend(drawn)
            pub = {"kind": "exchange", "seat": seat, "count": k}
            self._private([dict(pub, drawn=list(drawn)) if s == seat else dict(pub) for s in range(n)])

        # §6 take.
        if self.status[dealer] == "entered":
            give = yield from self._ask(dealer, "take", [None, *canonical(self.hands[dealer])])
            if give is not None:
                self.hands[dealer].remove(give)
                self.hands[dealer].append(self.face_up)
                self.face_up_taken = True
            self._public({"kind": "take", "seat": dealer, "taken": give is not None})

        # §7 tricks.
        leader = entered[0]
        for t in range(N_TRICKS):
            self.leader = leader
            self.trick = []
            start = entered.index(leader)
            order = entered[start:] + entered[:start]
            for seat in order:
                legal = self._playable(seat, first_trick=(t == 0))
                card = yield from self._ask(seat, "play", legal)
                self.hands[seat].remove(card)
                self.trick.append([seat, card])
                self._public({"kind": "play", "seat": seat, "card": card})
            winner = self._trick_winner(self.trick)
            cards = [list(x) for x in self.trick]
            self.played.append({"leader": leader, "cards": cards, "winner": winner})
            self.trick = []
            self.tricks[winner] += 1
            self.scores[winner] -= 1
            self._public({"kind": "trick", "winner": winner, "cards": cards,
                          "scores": list(self.scores)})
            over = self._round_over()
            if over is not None:
                # §8.3: cut short, no +5.
                self.seen[f"round_ends_on_trick_{t + 1}"] += 1
                if t == N_TRICKS - 1 and any(
                        self.status[s] == "entered" and self.tricks[s] == 0 for s in range(n)):
                    self.seen["fifth_trick_end_denies_muushig"] += 1
                self._hand_end([])
                return over
            leader = winner
        muushig = [s for s in range(n) if self.status[s] == "entered" and self.tricks[s] == 0]
        if muushig:
            self.seen["muushig"] += 1
        for s in muushig:
            self.scores[s] += 5
        self._hand_end(muushig)
        return None

    def _decide(self, seat: int, choice: str, forced: bool) -> None:
        self.status[seat] = "entered" if choice == "enter" else "folded"
        self.fold_streak[seat] = self.fold_streak[seat] + 1 if choice == "fold" else 0
        self._public({"kind": "decision", "seat": seat, "choice": choice, "forced": forced})

    def _playable(self, seat: int, first_trick: bool) -> list[str]:
        hand = canonical(self.hands[seat])
        trump = self.trump
        if not self.trick:
            # §7.2 leading.
            if self.trump_ace_first_lead and first_trick and ("A" + trump) in hand:
                self.seen["trump_ace_first_lead"] += 1
                return ["A" + trump]
            held_aces = {suit_of(c) for c in hand if c[0] == "A"}
            legal = [c for c in hand if suit_of(c) not in held_aces or c[0] == "A"]
            if len(legal) < len(hand):
                self.seen["lead_ace_rule"] += 1
                if any(suit_of(c) == trump and c not in legal for c in hand):
                    self.seen["lead_ace_rule_trump"] += 1
            return legal
        led = suit_of(self.trick[0][1])
        on_table = [c for _, c in self.trick]
        trump_played = any(suit_of(c) == trump for c in on_table)
        of_led = [c for c in hand if suit_of(c) == led]
        if of_led:
            # §7.3a.
            if led != trump and trump_played:
                if any(rank_of(c) > max(rank_of(x) for x in on_table if suit_of(x) == led)
                       for c in of_led) and len(of_led) > 1:
                    self.seen["follow_beat_lapses_after_trump"] += 1
                return of_led
            high = max(rank_of(c) for c in on_table if suit_of(c) == led)
            higher = [c for c in of_led if rank_of(c) > high]
            if higher and len(higher) < len(of_led):
                self.seen["follow_must_beat" + ("_trump_led" if led == trump else "")] += 1
            return higher if higher else of_led
        trumps = [c for c in hand if suit_of(c) == trump]
        if trumps:
            # §7.3b.
            if trump_played:
                high = max(rank_of(c) for c in on_table if suit_of(c) == trump)
                higher = [c for c in trumps if rank_of(c) > high]
                if higher and len(higher) < len(trumps):
                    self.seen["must_over_trump"] += 1
                if not higher:
                    self.seen["must_trump_cannot_over"] += 1
                return higher if higher else trumps
            return trumps
        return hand  # §7.3c.

    def _trick_winner(self, trick: list[list[Any]]) -> int:
        # §7.4.
        trumps = [(rank_of(c), s) for s, c in trick if suit_of(c) == self.trump]
        if trumps:
            return max(trumps)[1]
        led = suit_of(trick[0][1])
        return max((rank_of(c), s) for s, c in trick if suit_of(c) == led)[1]


def replay(rules: Wire | None, decks: list[list[str]], actions: list[Any]) -> tuple[list[list[Wire]], Wire]:
    """Play ``actions`` (wire answers, in order) on ``decks``: every event
    payload each seat receives, in order, and the match result."""
    match = Independent(rules, decks)
    received: list[list[Wire]] = [[] for _ in range(match.n)]

    def collect(batch: list[list[Wire]]) -> None:
        for seat, payloads in enumerate(batch):
            received[seat].extend(payloads)

    collect(match.start())
    for action in actions:
        collect(match.act(action))
    if not match.finished:
        raise ValueError(f"the match is not over after {len(actions)} actions")
    return received, match.result()
