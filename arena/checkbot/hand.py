"""A small scripted Muushig table for the compliance checker (sans-IO).

The checker must send a bot realistic, mutually consistent positions: the
cards in ``legal`` are the cards in ``state``, a card drawn in the exchange
shows up in the next request, a trick's winner leads the next one. So rather
than freezing dozens of hand-written JSON positions, the checker deals fixed
decks (see ``fixtures``) and walks them through the rules here, with the
house seats following a fixed plan.

This is deliberately independent of the arena's engine: the checker is a
second, tiny reading of the rules page (§3 deal, §4 decisions, §5 exchange,
§6 take, §7 tricks, §8 score), so it stays usable by bot authors even while
the engine changes, and disagreements between the two show up in tests.

A hand is a generator: it yields :class:`Tell` (an event payload this seat
may see) and :class:`Ask` (a request for the bot's seat); the driver sends
back the action it applied for an ``Ask`` (always one of ``legal``).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from enum import StrEnum
from itertools import combinations
from typing import Any, Generator, Iterable, Mapping

RANKS = "789TJQKA"
SUITS = "HSDC"
# Canonical order (rules §1.3): by suit H, S, D, C, then by rank ascending.
FULL_DECK: tuple[str, ...] = tuple(rank + suit for suit in SUITS for rank in RANKS)
SEATS = 5
HAND_SIZE = 5
TRICKS_PER_HAND = 5


class Phase(StrEnum):
    DECIDE = "decide"
    EXCHANGE = "exchange"
    TAKE = "take"
    PLAY = "play"
    ARRANGE = "arrange"  # thirteen cards: answered under constraints, no legal list


def card_key(card: str) -> tuple[int, int]:
    return SUITS.index(card[1]), RANKS.index(card[0])


def canonical(cards: Iterable[str]) -> list[str]:
    return sorted(cards, key=card_key)


def is_card(value: Any) -> bool:
    return isinstance(value, str) and value in FULL_DECK


def rank(card: str) -> int:
    return RANKS.index(card[0])


def playable(hand: Iterable[str], trick: list[tuple[int, str]], trump: str) -> list[str]:
    """The cards this hand may play to ``trick`` (rules §7.2–7.3)."""
    cards = list(hand)
    if not trick:
        # A held ace must lead its own suit.
        return canonical(c for c in cards if c[0] == "A" or "A" + c[1] not in cards)
    played = [card for _, card in trick]
    led = played[0][1]
    trumps_played = [c for c in played if c[1] == trump]
    follow = [c for c in cards if c[1] == led]
    if follow:
        if led != trump and trumps_played:
            return canonical(follow)
        highest = max(rank(c) for c in played if c[1] == led)
        higher = [c for c in follow if rank(c) > highest]
        return canonical(higher or follow)
    my_trumps = [c for c in cards if c[1] == trump]
    if my_trumps:
        if trumps_played:
            highest = max(rank(c) for c in trumps_played)
            over = [c for c in my_trumps if rank(c) > highest]
            return canonical(over or my_trumps)
        return canonical(my_trumps)
    return canonical(cards)


def trick_winner(trick: list[tuple[int, str]], trump: str) -> int:
    """Seat of the highest trump, else of the highest card of the led suit."""
    led = trick[0][1][1]
    trumps = [(rank(c), s) for s, c in trick if c[1] == trump]
    if trumps:
        return max(trumps)[1]
    return max((rank(c), s) for s, c in trick if c[1] == led)[1]


def exchange_options(hand: Iterable[str], most: int) -> list[list[str]]:
    """Every discard set of 0..most cards: by size, then card by card."""
    ordered = canonical(hand)
    return [list(combo) for k in range(most + 1) for combo in combinations(ordered, k)]


def take_options(hand: Iterable[str]) -> list[str | None]:
    return [None, *canonical(hand)]


def default_action(phase: Phase, legal: list[Any]) -> Any:
    """What the server applies at a deadline (rules §11)."""
    if phase is Phase.DECIDE:
        return "fold" if "fold" in legal else "enter"
    if phase is Phase.EXCHANGE:
        return []
    if phase is Phase.TAKE:
        return None
    return legal[0]


def is_legal(ask: Ask, action: Any) -> bool:
    """Whether ``action`` is one of ``ask.legal`` (an exchange as a set)."""
    if ask.phase is Phase.EXCHANGE:
        if not isinstance(action, list) or not all(is_card(c) for c in action):
            return False
        if len(set(action)) != len(action):
            return False
        return canonical(action) in ask.legal
    if ask.phase is Phase.TAKE and action is None:
        return None in ask.legal
    return isinstance(action, str) and action in ask.legal


def why_illegal(ask: Ask, action: Any) -> str:
    shown = short(action)
    if ask.phase is Phase.EXCHANGE:
        return f"{shown} is not an allowed discard set: send an array of distinct cards from your hand, at most {max(len(s) for s in ask.legal)}"
    if ask.phase is Phase.TAKE:
        return f"{shown} is not legal: send null to decline or one card from your hand ({', '.join(ask.legal[1:])})"
    return f"{shown} is not legal here; legal: {short(ask.legal)}"


def assess_listed(ask: Ask, action: Any) -> Assessment:
    """A Muushig answer against the request's ``legal`` list."""
    if not is_legal(ask, action):
        return Assessment(legal=False, reason=why_illegal(ask, action))
    return Assessment(legal=True, applied=canonical(action) if ask.phase is Phase.EXCHANGE else action)


def short(value: Any, limit: int = 80) -> str:
    """A value as the bot author wrote it (JSON), cut to ``limit``."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def commitment(salt: str, deck: Iterable[str]) -> str:
    """Protocol §5: hex SHA-256 of ``salt + ":" + deck joined by ","``."""
    return hashlib.sha256(f"{salt}:{','.join(deck)}".encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class HousePlan:
    """What the checker's own seats do in one hand.

    ``decisions``: seats that enter (every other house seat folds; a house
    dealer asked to decide enters). ``discards``: how many cards a house seat
    exchanges. ``take``: whether a house dealer takes the face-up card.
    """

    enter: frozenset[int] = frozenset()
    discards: Mapping[int, int] = field(default_factory=dict)
    take: bool = False


@dataclass(frozen=True, slots=True)
class HandSetup:
    round: int
    hand: int
    dealer: int
    deck: tuple[str, ...]
    salt: str
    plan: HousePlan

    def __post_init__(self) -> None:
        if sorted(self.deck) != sorted(FULL_DECK):
            raise ValueError(f"hand {self.hand}: a deck must hold each of the 32 cards once")

    @property
    def commitment(self) -> str:
        return commitment(self.salt, self.deck)

    def reveal(self) -> dict[str, Any]:
        return {"round": self.round, "hand": self.hand, "salt": self.salt, "deck": list(self.deck)}


@dataclass(frozen=True, slots=True)
class Tell:
    """An event payload (with ``kind``) for the bot's seat."""

    event: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Ask:
    phase: Phase
    legal: list[Any]
    state: dict[str, Any]
    # A request that describes its answers instead of listing them
    # (thirteen's arrange) carries them here and an empty ``legal``.
    constraints: dict[str, Any] | None = None
    # Events the seat sees while this request is open (other seats answering
    # at the same time); sent right after the request.
    followups: tuple["Tell", ...] = ()


@dataclass(frozen=True, slots=True)
class Assessment:
    """The referee's reading of one answer.

    ``legal``: the server would accept it; ``applied`` is then its canonical
    form. ``reason`` says why it is refused (sent in ``illegal_action``);
    ``warning`` marks an accepted answer that costs the bot (a fouled
    arrangement under ``foul_policy = penalize``).
    """

    legal: bool
    applied: Any = None
    reason: str = ""
    warning: str = ""


Step = Tell | Ask


@dataclass
class _Table:
    """Everything about one hand in progress (the checker sees all of it)."""

    setup: HandSetup
    bot: int
    scores: list[int]
    stars: list[int]
    hands: list[list[str]] = field(default_factory=list)
    stock: list[str] = field(default_factory=list)
    status: list[str] = field(default_factory=lambda: ["waiting"] * SEATS)
    face_up_taken: bool = False
    trick: list[tuple[int, str]] = field(default_factory=list)
    leader: int | None = None
    tricks: list[int] = field(default_factory=lambda: [0] * SEATS)
    played: list[dict[str, Any]] = field(default_factory=list)

    @property
    def face_up(self) -> str:
        return self.setup.deck[25]

    @property
    def trump(self) -> str:
        return self.face_up[1]

    def order_from(self, first: int) -> list[int]:
        return [(first + i) % SEATS for i in range(SEATS)]

    def observe(self) -> dict[str, Any]:
        """Protocol §3 ``state`` for the bot's seat: every listed field."""
        return {
            "round": self.setup.round,
            "hand": self.setup.hand,
            "dealer": self.setup.dealer,
            "seat": self.bot,
            "trump": self.trump,
            "face_up": self.face_up,
            "cards": canonical(self.hands[self.bot]),
            "scores": list(self.scores),
            "stars": list(self.stars),
            "status": list(self.status),
            "stock": len(self.stock),
            "face_up_taken": self.face_up_taken,
            "trick": [[s, c] for s, c in self.trick],
            "leader": self.leader,
            "tricks": list(self.tricks),
            "played": [dict(t) for t in self.played],
        }


def _house_discards(hand: list[str], count: int, trump: str) -> list[str]:
    # Low non-trumps go first: what a cautious player throws away.
    ranked = sorted(hand, key=lambda c: (c[1] == trump, rank(c), card_key(c)))
    return ranked[:count]


def _house_play(t: _Table, seat: int, legal: list[str]) -> str:
    """A house seat follows with its first legal card, and leads the card
    that leaves the bot the most legal replies: a request with a single
    legal card tests little (and the illegal_action check needs a choice)."""
    if t.trick or t.status[t.bot] != "entered":
        return legal[0]
    return max(legal, key=lambda card: len(playable(t.hands[t.bot], [(seat, card)], t.trump)))


def play_hand(
    setup: HandSetup, bot: int, scores: list[int], stars: list[int], *, starts_round: bool
) -> Generator[Step, Any, bool]:
    """Yield the bot's view of one hand; return True if the round ended.

    ``scores`` is updated in place, as the hand goes.
    """
    t = _Table(setup=setup, bot=bot, scores=scores, stars=stars)
    deck, dealer, plan = setup.deck, setup.dealer, setup.plan
    t.hands = [[] for _ in range(SEATS)]
    for i in range(HAND_SIZE * SEATS):
        t.hands[(dealer + 1 + i) % SEATS].append(deck[i])
    t.stock = list(deck[26:])
    head = {"round": setup.round, "hand": setup.hand}

    if starts_round:
        yield Tell({"kind": "round_start", "round": setup.round, "dealer": dealer, "scores": list(scores)})
    yield Tell({"kind": "commit", **head, "commitment": setup.commitment})
    yield Tell(
        {"kind": "hand_start", **head, "dealer": dealer, "face_up": t.face_up, "trump": t.trump,
         "cards": canonical(t.hands[bot])}
    )

    # §4 decisions: left of the dealer first, the dealer last.
    for seat in t.order_from(dealer + 1)[:-1]:
        if seat == bot:
            choice = yield Ask(Phase.DECIDE, ["enter", "fold"], t.observe())
        else:
            choice = "enter" if seat in plan.enter else "fold"
        t.status[seat] = "entered" if choice == "enter" else "folded"
        yield Tell({"kind": "decision", "seat": seat, "choice": choice, "forced": False})
    entered = sum(1 for s in range(SEATS) if t.status[s] == "entered")
    if entered == 0:
        # Everyone folded: the dealer takes all five tricks unasked.
        t.tricks[dealer] = TRICKS_PER_HAND
        scores[dealer] -= TRICKS_PER_HAND
        yield Tell({"kind": "all_folded", "dealer": dealer, "scores": list(scores)})
        yield Tell({"kind": "hand_end", "tricks": list(t.tricks), "muushig": [], "scores": list(scores)})
        if scores[dealer] <= 0:
            yield Tell({"kind": "round_end", "round": setup.round, "winner": dealer, "scores": list(scores)})
            return True
        return False
    if entered == 1:
        choice, forced = "enter", True
    elif dealer == bot:
        choice, forced = (yield Ask(Phase.DECIDE, ["enter", "fold"], t.observe())), False
    else:
        choice, forced = "enter", False
    t.status[dealer] = "entered" if choice == "enter" else "folded"
    yield Tell({"kind": "decision", "seat": dealer, "choice": choice, "forced": forced})
    players = [s for s in t.order_from(dealer + 1) if t.status[s] == "entered"]

    # §5 exchange, in the same order, until the stock runs out.
    for seat in players:
        if not t.stock:
            break
        most = min(HAND_SIZE, len(t.stock))
        if seat == bot:
            discards = yield Ask(Phase.EXCHANGE, exchange_options(t.hands[bot], most), t.observe())
        else:
            discards = _house_discards(t.hands[seat], min(plan.discards.get(seat, 0), most), t.trump)
        drawn, t.stock = t.stock[: len(discards)], t.stock[len(discards):]
        t.hands[seat] = [c for c in t.hands[seat] if c not in discards] + drawn
        event: dict[str, Any] = {"kind": "exchange", "seat": seat, "count": len(discards)}
        if seat == bot:
            event["drawn"] = canonical(drawn)
        yield Tell(event)

    # §6 the dealer's take.
    if t.status[dealer] == "entered":
        if dealer == bot:
            give = yield Ask(Phase.TAKE, take_options(t.hands[bot]), t.observe())
        else:
            give = _house_discards(t.hands[dealer], 1, t.trump)[0] if plan.take else None
        if give is not None:
            t.hands[dealer] = [c for c in t.hands[dealer] if c != give] + [t.face_up]
            t.face_up_taken = True
        yield Tell({"kind": "take", "seat": dealer, "taken": give is not None})

    # §7 tricks; §8 score after each.
    t.leader = players[0]
    for _ in range(TRICKS_PER_HAND):
        t.trick = []
        for seat in [s for s in t.order_from(t.leader) if t.status[s] == "entered"]:
            legal = playable(t.hands[seat], t.trick, t.trump)
            if seat == bot:
                card = yield Ask(Phase.PLAY, legal, t.observe())
            else:
                card = _house_play(t, seat, legal)
            t.hands[seat].remove(card)
            t.trick.append((seat, card))
            yield Tell({"kind": "play", "seat": seat, "card": card})
        winner = trick_winner(t.trick, t.trump)
        t.tricks[winner] += 1
        scores[winner] -= 1
        cards = [[s, c] for s, c in t.trick]
        t.played.append({"leader": t.leader, "cards": cards, "winner": winner})
        yield Tell({"kind": "trick", "winner": winner, "cards": cards, "scores": list(scores)})
        t.trick, t.leader = [], winner
        if scores[winner] <= 0:
            # §8.3: the round ends at once; no +5 for this unfinished hand.
            yield Tell({"kind": "hand_end", "tricks": list(t.tricks), "muushig": [], "scores": list(scores)})
            yield Tell({"kind": "round_end", "round": setup.round, "winner": winner, "scores": list(scores)})
            return True
    muushig = [s for s in players if t.tricks[s] == 0]
    for seat in muushig:
        scores[seat] += 5
    yield Tell({"kind": "hand_end", "tricks": list(t.tricks), "muushig": muushig, "scores": list(scores)})
    return False
