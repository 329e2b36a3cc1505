"""What is read out of an engine: a seat's observation and the match result.

``Observer.observe`` builds the protocol's ``state`` object (protocol §3) only from
what rules §10 lets that seat know: its own cards, never another seat's hand,
discards, drawings, the stock's order or a folded hand. Each observation is
a new dict with new lists, except the dicts of tricks already played and
the ``[seat, card]`` pairs of the trick in progress, which later
observations share: treat an observation as read-only, like an event's
payload.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from arena.games.muushig.cards import CARD_STR, SUITS, mask_strs
from arena.games.muushig.phases import EXCHANGE, PHASES, PLAY, STATUS_NAMES, TAKE

if TYPE_CHECKING:
    from arena.games.muushig.engine import MuushigEngine
    from arena.games.muushig.state import HandState


class Observer:
    """Builds observations, keeping the wire forms later observations of the
    same hand share: the fields fixed for the whole hand, the statuses once
    every seat has decided, one dict per trick played and one ``[seat,
    card]`` pair per card of the trick in progress.

    A memo of the view, not part of the game: it is kept for the
    :class:`HandState` it was made from and starts afresh when the engine
    deals a new one (or a new trick list), so the game state never holds a
    wire form and never has to be told to forget one."""

    __slots__ = ("_hand", "_base", "_status", "_played", "_trick", "_trick_of")

    def __init__(self) -> None:
        self._hand: HandState | None = None
        self._base: dict[str, Any] = {}
        self._status: list[str] | None = None
        self._played: list[dict[str, Any]] = []
        self._trick: list[list[Any]] = []
        self._trick_of: list[tuple[int, int]] | None = None

    def observe(self, e: MuushigEngine, seat: int) -> dict[str, Any]:
        # Asked for once per decision, so made the cheap way: a copy of the
        # hand's fixed fields with the others set from the fast state
        # directly (a 20-key dict display costs about three times the copy),
        # and what only grows or is settled during a hand made into wire
        # form once.
        hand = e.hand
        if hand is not self._hand:
            self._hand = hand
            self._base = _hand_base(e)
            self._status = None
            self._played = []
            self._trick_of = None
        d = self._base.copy()
        to_act = e.current_seat
        stage = e.stage
        d["seat"] = seat
        if to_act is not None:
            d["phase"] = PHASES[stage]
            d["to_act"] = to_act
            if stage == EXCHANGE:
                d["max_discard"] = hand.exchange_limit
        d["cards"] = mask_strs(hand.hands[seat])
        d["scores"] = e._scores[:]
        d["stars"] = e._stars[:]
        status = self._status
        if status is None:
            status = [STATUS_NAMES[s] for s in hand.status]
            if stage == EXCHANGE or stage == TAKE or stage == PLAY:  # every seat has decided
                self._status = status
        d["status"] = status[:]
        d["stock"] = len(hand.stock) - hand.stock_drawn
        d["exchanges"] = hand.exchanges[:]  # cards exchanged per seat, None = not (yet) asked
        d["face_up_taken"] = hand.face_up_taken
        trick = hand.trick
        pairs = self._trick
        if self._trick_of is not trick:  # a new trick: a new list in HandState.trick
            pairs = self._trick = []
            self._trick_of = trick
        if len(pairs) != len(trick):
            pairs.extend([s, CARD_STR[c]] for s, c in trick[len(pairs):])
        d["trick"] = pairs[:]
        d["leader"] = hand.leader
        d["tricks"] = hand.tricks[:]
        played = self._played
        if len(played) != len(hand.played):
            played.extend(_played_wire(t) for t in hand.played[len(played):])
        d["played"] = played[:]
        return d


def _hand_base(e: MuushigEngine) -> dict[str, Any]:
    """Every field in protocol order; those fixed for the hand set, the
    others with their value when no seat is to act."""
    hand = e.hand
    return {
        "round": min(e.round_number, e.n_rounds - 1),
        "hand": e.hand_number,
        "dealer": e.dealer,
        "seat": None,
        "phase": None,
        "to_act": None,
        "trump": SUITS[hand.trump],
        "face_up": CARD_STR[hand.face_up],  # stays the face-up card after a take
        "cards": None,
        "scores": None,
        "stars": None,
        "status": None,
        "stock": None,
        "exchanges": None,
        "max_discard": None,
        "face_up_taken": None,
        "trick": None,
        "leader": None,
        "tricks": None,
        "played": None,
    }


def _played_wire(trick: tuple[int, tuple[tuple[int, int], ...], int]) -> dict[str, Any]:
    lead, cards, winner = trick
    return {"leader": lead, "cards": [[s, CARD_STR[c]] for s, c in cards], "winner": winner}


def rank_places(stars: Sequence[int], sums: Sequence[int]) -> list[int]:
    """rules §9.2: more stars first, then the lower sum; equal keys share a
    place and the next place skips (1, 1, 3)."""
    keys = [(-st, su) for st, su in zip(stars, sums)]
    return [1 + sum(1 for other in keys if other < key) for key in keys]


def match_result(stars: Sequence[int], finals: Sequence[Sequence[int]]) -> dict[str, Any]:
    """protocol §6 ``result`` from the stars and each round's final scores."""
    n = len(stars)
    final_scores = [[scores[s] for scores in finals] for s in range(n)]
    sums = [sum(f) for f in final_scores]
    return {"stars": list(stars), "final_scores": final_scores, "sums": sums, "ranks": rank_places(stars, sums)}
