"""A plain, independent Muushig, written straight from the arena's rules page.

No code is shared with ``arena.games.muushig``: cards are strings, hands are
lists, the flow is one generator that reads like the rules. It is slow on
purpose (clarity first) and serves the differential tests and the benchmark
baseline. It produces the *record* form of every event (``for_record()``).
"""

from __future__ import annotations

from typing import Any, Generator, Iterable

RANKS = "789TJQKA"
SUITS = "HSDC"


def rank(card: str) -> int:
    return RANKS.index(card[0])


def canonical(card: str) -> tuple[int, int]:
    return (SUITS.index(card[1]), RANKS.index(card[0]))


def sort_cards(cards: list[str]) -> list[str]:
    return sorted(cards, key=canonical)


def full_deck(players: int = 5) -> list[str]:
    removed = {5: "", 4: "7", 3: "78", 2: "789"}[players]
    return [r + s for s in SUITS for r in RANKS if r not in removed]


def playable(hand: list[str], trick: list[tuple[int, str]], trump: str, first_trick: bool,
             trump_ace_first: bool) -> list[str]:
    """Rules §7.2 and §7.3, clause by clause."""
    if not trick:
        if trump_ace_first and first_trick and "A" + trump in hand:
            return ["A" + trump]
        # A leader holding the ace of a suit may lead that suit only with the ace.
        return sort_cards([c for c in hand if c[0] == "A" or ("A" + c[1]) not in hand])
    led = trick[0][1][1]
    same_suit = [c for c in hand if c[1] == led]
    trumps_on_table = [c for _, c in trick if c[1] == trump]
    if same_suit:
        if led != trump and trumps_on_table:
            return sort_cards(same_suit)
        top = max(rank(c) for _, c in trick if c[1] == led)
        higher = [c for c in same_suit if rank(c) > top]
        return sort_cards(higher if higher else same_suit)
    my_trumps = [c for c in hand if c[1] == trump]
    if my_trumps:
        if trumps_on_table:
            top = max(rank(c) for c in trumps_on_table)
            higher = [c for c in my_trumps if rank(c) > top]
            return sort_cards(higher if higher else my_trumps)
        return sort_cards(my_trumps)
    return sort_cards(hand)


def trick_winner(trick: list[tuple[int, str]], trump: str) -> int:
    trumps = [(rank(c), s) for s, c in trick if c[1] == trump]
    if trumps:
        return max(trumps)[1]
    led = trick[0][1][1]
    return max((rank(c), s) for s, c in trick if c[1] == led)[1]


def discard_options(hand: list[str], most: int) -> list[list[str]]:
    ordered = sort_cards(hand)
    sets: list[list[str]] = [[]]
    for size in range(1, most + 1):
        def grow(start: int, chosen: list[str]) -> None:
            if len(chosen) == size:
                sets.append(list(chosen))
                return
            for i in range(start, len(ordered)):
                grow(i + 1, chosen + [ordered[i]])
        grow(0, [])
    return sets


class RoundOver(Exception):
    def __init__(self, winner: int) -> None:
        self.winner = winner


Request = tuple[int, str, list[Any]]


class ReferenceMatch:
    """Drive with ``pending`` (seat, phase, legal) and ``act(action)``."""

    def __init__(self, decks: Iterable[list[str]], rules: dict[str, Any] | None = None) -> None:
        rules = rules or {}
        self.players = rules.get("players", 5)
        self.max_hands = rules.get("max_hands", 200)
        self.last_two_forced = rules.get("last_two_forced", False)
        self.auto_enter = rules.get("auto_enter_after_folds", 0)
        self.trump_ace_first = rules.get("trump_ace_first_lead", False)
        self.decks = iter(decks)  # may be lazy
        self.events: list[dict[str, Any]] = []
        self.stars = [0] * self.players
        self.final_scores: list[list[int]] = []
        self.pending: Request | None = None
        self._flow = self._match()
        self.pending = next(self._flow, None)

    def act(self, action: Any) -> None:
        assert self.pending is not None, "the match is over"
        assert action in self.pending[2], f"illegal {action!r}"
        try:
            self.pending = self._flow.send(action)
        except StopIteration:
            self.pending = None

    def emit(self, kind: str, **fields: Any) -> None:
        self.events.append({"kind": kind, **fields})

    # The whole match as one generator: each ``yield`` asks a seat.
    def _match(self) -> Generator[Request, Any, None]:
        n = self.players
        for rnd in range(n):
            self.scores = [15] * n
            self.fold_streak = [0] * n
            dealer = rnd % n
            self.emit("round_start", round=rnd, dealer=dealer, scores=list(self.scores))
            hand_no = 0
            while True:
                try:
                    yield from self._hand(rnd, hand_no, dealer)
                    if hand_no + 1 >= self.max_hands:
                        low = min(self.scores)
                        raise RoundOver(self.scores.index(low))
                except RoundOver as over:
                    self.stars[over.winner] += 1
                    self.final_scores.append(list(self.scores))
                    self.emit("round_end", round=rnd, winner=over.winner, scores=list(self.scores))
                    break
                hand_no += 1
                dealer = (dealer + 1) % n

    def _hand(self, rnd: int, hand_no: int, dealer: int) -> Generator[Request, Any, None]:
        n = self.players
        deck = list(next(self.decks))
        self.emit("deal", round=rnd, hand=hand_no, deck=list(deck))
        hands: list[list[str]] = [[] for _ in range(n)]
        for i in range(5 * n):
            hands[(dealer + 1 + i) % n].append(deck[i])
        face_up = deck[5 * n]
        trump = face_up[1]
        stock = deck[5 * n + 1:]
        self.emit("hand_start", round=rnd, hand=hand_no, dealer=dealer, face_up=face_up, trump=trump,
                  hands=[sort_cards(h) for h in hands])
        tricks = [0] * n

        # Round 1: enter or fold, left of the dealer first, dealer last.
        entered: list[int] = []
        others = [(dealer + k) % n for k in range(1, n)]
        for pos, seat in enumerate(others):
            forced = self.auto_enter > 0 and self.fold_streak[seat] >= self.auto_enter
            if (self.last_two_forced and n >= 3 and pos == n - 2
                    and all(s not in entered for s in others[: n - 2])):
                forced = True
            if forced:
                choice = "enter"
            else:
                choice = yield (seat, "decide", ["enter", "fold"])
            self.emit("decision", seat=seat, choice=choice, forced=forced)
            if choice == "enter":
                entered.append(seat)
                self.fold_streak[seat] = 0
            else:
                self.fold_streak[seat] += 1
        if not entered:
            tricks[dealer] = 5
            self.scores[dealer] -= 5
            self.fold_streak[dealer] = 0
            self.emit("all_folded", dealer=dealer, scores=list(self.scores))
            self.emit("hand_end", tricks=list(tricks), muushig=[], scores=list(self.scores))
            if self.scores[dealer] <= 0:
                raise RoundOver(dealer)
            return
        forced = len(entered) == 1 or (self.auto_enter > 0 and self.fold_streak[dealer] >= self.auto_enter)
        choice = "enter" if forced else (yield (dealer, "decide", ["enter", "fold"]))
        self.emit("decision", seat=dealer, choice=choice, forced=forced)
        if choice == "enter":
            entered.append(dealer)
            self.fold_streak[dealer] = 0
        else:
            self.fold_streak[dealer] += 1

        # Round 2: exchange while the stock lasts.
        for seat in entered:
            if not stock:
                break
            most = min(5, len(stock))
            discard = yield (seat, "exchange", discard_options(hands[seat], most))
            drawn = stock[: len(discard)]
            stock = stock[len(discard):]
            hands[seat] = [c for c in hands[seat] if c not in discard] + drawn
            self.emit("exchange", seat=seat, count=len(discard), discarded=list(discard), drawn=list(drawn))

        # The dealer's take.
        if dealer in entered:
            give = yield (dealer, "take", [None] + sort_cards(hands[dealer]))
            if give is not None:
                hands[dealer].remove(give)
                hands[dealer].append(face_up)
            self.emit("take", seat=dealer, taken=give is not None, discarded=give)

        # Tricks.
        leader = entered[0]
        for t in range(5):
            start = entered.index(leader)
            order = entered[start:] + entered[:start]
            trick: list[tuple[int, str]] = []
            for seat in order:
                legal = playable(hands[seat], trick, trump, t == 0, self.trump_ace_first)
                card = yield (seat, "play", legal)
                hands[seat].remove(card)
                trick.append((seat, card))
                self.emit("play", seat=seat, card=card)
            winner = trick_winner(trick, trump)
            tricks[winner] += 1
            self.scores[winner] -= 1
            self.emit("trick", winner=winner, cards=[[s, c] for s, c in trick], scores=list(self.scores))
            if self.scores[winner] <= 0:
                self.emit("hand_end", tricks=list(tricks), muushig=[], scores=list(self.scores))
                raise RoundOver(winner)
            leader = winner
        muushig = sorted(s for s in entered if tricks[s] == 0)
        for s in muushig:
            self.scores[s] += 5
        self.emit("hand_end", tricks=list(tricks), muushig=muushig, scores=list(self.scores))

    def result(self) -> dict[str, Any]:
        n = self.players
        finals = [[self.final_scores[r][s] for r in range(n)] for s in range(n)]
        sums = [sum(f) for f in finals]
        ranks = []
        for s in range(n):
            better = sum(1 for o in range(n)
                         if self.stars[o] > self.stars[s]
                         or (self.stars[o] == self.stars[s] and sums[o] < sums[s]))
            ranks.append(better + 1)
        return {"stars": list(self.stars), "final_scores": finals, "sums": sums, "ranks": ranks}
