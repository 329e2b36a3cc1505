"""What is read out of an engine: a seat's observation and the match result.

``observe`` builds the protocol's ``state`` object (protocol §3) only from
what rules §10 lets that seat know: its own cards, never another seat's hand,
discards, drawings, the stock's order or a folded hand.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from arena.games.muushig.cards import CARD_STR, SUITS, mask_cards
from arena.games.muushig.phases import EXCHANGE, PHASES, STATUS_NAMES

if TYPE_CHECKING:
    from arena.games.muushig.engine import MuushigEngine


def observe(e: MuushigEngine, seat: int) -> dict[str, Any]:
    to_act = e.current_seat
    hand = e.hand
    return {
        "round": min(e.round_number, e.n_rounds - 1),
        "hand": e.hand_number,
        "dealer": e.dealer,
        "seat": seat,
        "phase": PHASES[e.stage] if to_act is not None else None,
        "to_act": to_act,
        "trump": SUITS[hand.trump],
        "face_up": CARD_STR[hand.face_up],  # stays the face-up card after a take
        "cards": [CARD_STR[c] for c in mask_cards(hand.hands[seat])],
        "scores": list(e.scores),
        "stars": list(e.stars),
        "status": [STATUS_NAMES[s] for s in hand.status],
        "stock": hand.stock_left,
        "exchanges": list(hand.exchanges),  # cards exchanged per seat, None = not (yet) asked
        "max_discard": hand.exchange_limit if to_act is not None and e.stage == EXCHANGE else None,
        "face_up_taken": hand.face_up_taken,
        "trick": [[s, CARD_STR[c]] for s, c in hand.trick],
        "leader": hand.leader,
        "tricks": list(hand.tricks),
        "played": [
            {"leader": lead, "cards": [[s, CARD_STR[c]] for s, c in cards], "winner": w}
            for lead, cards, w in hand.played
        ],
    }


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
