"""Invariants over random play (hypothesis chooses seeds and rules)."""

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.games.base import IllegalActionError, NotYourTurnError
from arena.games.muushig import MuushigEngine
from arena.games.muushig.cards import CARD_STR, deck_for, mask_cards

from .helpers import RULES, all_cards

FAST = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def cards_everywhere(e: MuushigEngine) -> list[int]:
    """Every card of the hand, wherever it is now (white-box)."""
    cards = [c for h in e.hand.hands for c in mask_cards(h)]
    cards += list(e.hand.stock[e.hand.stock_drawn:])
    cards += [c for d in e.hand.discards for c in mask_cards(d)]
    cards += [c for _, trick, _ in e.hand.played for _, c in trick]
    cards += [c for _, c in e.hand.trick]
    if e.hand.take_discard is None:
        cards.append(e.hand.face_up)
    else:
        cards.append(e.hand.take_discard)  # the face-up card is in the dealer's hand
    return cards


def random_match(seed: int, rules: dict, on_step) -> tuple[MuushigEngine, list]:
    engine = MuushigEngine(rules, random.Random(seed))
    choose = random.Random(~seed)
    events = engine.start()
    while not engine.finished:
        on_step(engine)
        legal = engine.legal_actions()
        events += engine.play(legal[choose.randrange(len(legal))])
    return engine, events


@FAST
@given(seed=st.integers(0, 2**32), rules=RULES)
def test_cards_are_conserved_at_every_step(seed, rules):
    def check(e):
        assert sorted(cards_everywhere(e)) == sorted(deck_for(e.n_seats))

    random_match(seed, rules, check)


@FAST
@given(seed=st.integers(0, 2**32), rules=RULES)
def test_every_legal_action_is_accepted_and_illegal_ones_refused_with_a_reason(seed, rules):
    def check(e):
        legal = e.legal_actions()
        for a in legal:
            assert e.check_action(a).action == a
        if e.phase == "play":
            held = e.observation(e.current_seat)["cards"]
            for card in held:
                if card not in legal:
                    with pytest.raises(IllegalActionError) as err:
                        e.check_action(card)
                    assert "must" in str(err.value)
            strangers = [c for c in all_cards() if c not in held]
            with pytest.raises(IllegalActionError, match="not a card in your hand"):
                e.check_action(strangers[0])
        elif e.phase == "exchange":
            too_many = e.observation(e.current_seat)["max_discard"] + 1
            if too_many <= 5:
                with pytest.raises(IllegalActionError, match="at most"):
                    e.check_action(e.observation(e.current_seat)["cards"][:too_many])
        elif e.phase == "decide":
            with pytest.raises(IllegalActionError):
                e.check_action("maybe")
        assert e.default_action() in legal or e.phase == "exchange" and e.default_action() == []

    engine, _ = random_match(seed, rules, check)
    with pytest.raises(NotYourTurnError):
        engine.play("fold")


@FAST
@given(seed=st.integers(0, 2**32), rules=RULES)
def test_scores_are_fifteen_minus_tricks_plus_five_per_muushig(seed, rules):
    engine, events = random_match(seed, rules, lambda e: None)
    n = engine.n_seats
    tricks = muushig = None
    for ev in events:
        w = ev.for_record()
        if ev.kind == "round_start":
            tricks, muushig = [0] * n, [0] * n
        elif ev.kind == "trick":
            tricks[w["winner"]] += 1
        elif ev.kind == "all_folded":
            tricks[w["dealer"]] += 5
        elif ev.kind == "hand_end":
            for s in w["muushig"]:
                muushig[s] += 1
        if "scores" in w:
            assert w["scores"] == [15 - tricks[s] + 5 * muushig[s] for s in range(n)]


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**32), rules=RULES)
def test_no_seat_ever_sees_another_seats_hidden_cards(seed, rules):
    def check(e):
        for seat in range(e.n_seats):
            obs = e.observation(seat)
            own = set(obs["cards"])
            assert own == {CARD_STR[c] for c in mask_cards(e.hand.hands[seat])}
            public = {obs["face_up"]} | {c for _, c in obs["trick"]}
            public |= {c for t in obs["played"] for _, c in t["cards"]}
            seen = set(_strings(obs))
            for other in range(e.n_seats):
                if other == seat:
                    continue
                hidden = {CARD_STR[c] for c in mask_cards(e.hand.hands[other] | e.hand.discards[other])}
                hidden -= public
                assert not hidden & seen, (seat, other)

    engine, events = random_match(seed, rules, check)
    for ev in events:
        for seat in range(engine.n_seats):
            wire = ev.for_seat(seat)
            if ev.kind == "hand_start":
                assert wire["cards"] == ev.for_record()["hands"][seat]
            elif ev.kind == "exchange":
                assert ("drawn" in wire) == (ev.seat == seat) and "discarded" not in wire
            elif ev.kind == "take":
                assert "discarded" not in wire
            elif ev.kind == "deal":
                assert wire is None


def _strings(obj):
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _strings(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _strings(v)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32))
def test_same_seed_same_match(seed):
    _, a = random_match(seed, {}, lambda e: None)
    _, b = random_match(seed, {}, lambda e: None)
    assert [e.for_record() for e in a] == [e.for_record() for e in b]
