"""A seat's observation (protocol §3 ``state``) is exactly what the rules
let it know at every decision, however it is assembled, and one taken
earlier never changes as the match goes on."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from arena.games.muushig import MuushigEngine
from arena.games.muushig.cards import CARD_STR, SUITS, mask_cards
from arena.games.muushig.phases import EXCHANGE, PHASES, STATUS_NAMES


def written_from_the_protocol(e: MuushigEngine, seat: int) -> dict[str, Any]:
    """The ``state`` object field by field from the engine's read-only
    accessors, the plain way (protocol §3)."""
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
        "face_up": CARD_STR[hand.face_up],
        "cards": [CARD_STR[c] for c in mask_cards(hand.hands[seat])],
        "scores": list(e.scores),
        "stars": list(e.stars),
        "status": [STATUS_NAMES[s] for s in hand.status],
        "stock": hand.stock_left,
        "exchanges": list(hand.exchanges),
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


def _same_types(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same_types(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return all(_same_types(x, y) for x, y in zip(a, b))
    return True


@pytest.mark.parametrize("rules", [None, {"players": 3}, {"players": 4, "trump_ace_first_lead": True},
                                   {"auto_enter_after_folds": 2, "last_two_forced": True, "max_hands": 3}])
def test_every_seat_sees_the_protocol_state_at_every_decision(rules):
    for seed in range(3):
        engine = MuushigEngine(rules, random.Random(seed))
        engine.start()
        choice = random.Random(seed + 10).choice
        while True:
            for seat in range(engine.n_seats):
                seen = engine.observation(seat)
                expected = written_from_the_protocol(engine, seat)
                assert seen == expected and _same_types(seen, expected)
            if engine.finished:
                break
            engine.play(choice(engine.legal_actions()))


def test_an_observation_taken_earlier_does_not_change_as_play_goes_on():
    engine = MuushigEngine(None, random.Random(2))
    engine.start()
    choice = random.Random(3).choice
    taken: list[tuple[dict, dict]] = []
    while not engine.finished:
        seat = engine.current_seat
        seen = engine.observation(seat)
        taken.append((seen, copy.deepcopy(seen)))
        engine.play(choice(engine.legal_actions()))
    assert all(seen == snapshot for seen, snapshot in taken)


def test_changing_an_observation_does_not_change_the_next_ones_top_level_lists():
    engine = MuushigEngine(None, random.Random(4))
    engine.start()
    choice = random.Random(5).choice
    while len(engine.hand.played) < 2 or engine.finished:
        engine.play(choice(engine.legal_actions()))
    seat = engine.current_seat
    first = engine.observation(seat)
    for key in ("cards", "scores", "stars", "status", "exchanges", "trick", "tricks", "played"):
        first[key].clear()
    assert engine.observation(seat) == written_from_the_protocol(engine, seat)
