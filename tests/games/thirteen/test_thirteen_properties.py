"""Property tests over random deals and arbitrary (fouled or not) arrangements."""

import json
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from arena.games.thirteen import ThirteenEngine
from arena.games.thirteen.arranger import Split
from arena.games.thirteen.cards import CARD_STR, DECK, deal_hands
from arena.games.thirteen.scoring import score_deal
from arena.games.thirteen.wire import seat_hands

FLAGS = st.fixed_dictionaries(
    {
        "wheel": st.sampled_from(["lowest", "second_highest"]),
        "shoot": st.sampled_from(["plus3", "double"]),
        "mid_full_house_bonus": st.sampled_from([2, 1]),
    }
)


def random_split(hand, rng):
    cards = list(hand)
    rng.shuffle(cards)
    return Split(tuple(sorted(cards[:3])), tuple(sorted(cards[3:8])), tuple(sorted(cards[8:])))


def random_deal(seed, players, rules):
    rng = random.Random(seed)
    deck = list(DECK)
    rng.shuffle(deck)
    hands = deal_hands(tuple(deck))[:players]
    splits = [random_split(h, rng) for h in hands]
    seats = [seat_hands(s, rules["wheel"]) for s in splits]
    return seats, score_deal(seats, shoot=rules["shoot"], mid_full_house_bonus=rules["mid_full_house_bonus"])


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32), players=st.integers(2, 4), rules=FLAGS)
def test_matrix_is_antisymmetric_and_rows_sum_to_zero_sum_scores(seed, players, rules):
    _, s = random_deal(seed, players, rules)
    for i in range(players):
        assert s.pairs[i][i] == 0
        for j in range(players):
            assert s.pairs[j][i] == -s.pairs[i][j]
        assert s.scores[i] == sum(s.pairs[i])
    assert sum(s.scores) == 0


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32), players=st.integers(2, 4), rules=FLAGS, perm_seed=st.integers(0, 1000))
def test_scores_do_not_depend_on_who_sits_where(seed, players, rules, perm_seed):
    seats, s = random_deal(seed, players, rules)
    perm = list(range(players))
    random.Random(perm_seed).shuffle(perm)
    t = score_deal([seats[p] for p in perm], shoot=rules["shoot"], mid_full_house_bonus=rules["mid_full_house_bonus"])
    for i in range(players):
        assert t.scores[i] == s.scores[perm[i]]
        for j in range(players):
            assert t.pairs[i][j] == s.pairs[perm[i]][perm[j]]


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32), players=st.integers(2, 4), order_seed=st.integers(0, 1000))
def test_no_seat_sees_another_seats_cards_before_the_showdown(seed, players, order_seed):
    rng = random.Random(order_seed)
    e = ThirteenEngine({"deals": 2, "players": players}, random.Random(seed))
    # What each seat has been sent during the current deal, as JSON text.
    sent: list[list[str]] = [[] for _ in range(players)]

    def deliver(events):
        for ev in events:
            if ev.kind == "deal_start":
                for texts in sent:
                    texts.clear()
            public = ev.for_public()
            assert public is None or "cards" not in public and "hands" not in public
            for s in range(players):
                w = ev.for_seat(s)
                if w is not None:
                    sent[s].append(json.dumps(w))

    deliver(e.start())
    while not e.finished:
        hands = [set(e.observation(s)["cards"]) for s in range(players)]
        order = list(e.to_act)
        rng.shuffle(order)
        for s in order:
            for viewer in range(players):
                text = "".join(sent[viewer]) + json.dumps(e.observation(viewer))
                others = set().union(*(hands[o] for o in range(players) if o != viewer))
                assert not [c for c in others if f'"{c}"' in text], f"seat {viewer} saw another seat's card"
            deliver(e.play_for(s, _any(e, s, rng)))


def _any(e, seat, rng):
    split = random_split([CARD_STR.index(c) for c in e.observation(seat)["cards"]], rng)
    return {"front": [CARD_STR[c] for c in split.front], "middle": [CARD_STR[c] for c in split.middle],
            "back": [CARD_STR[c] for c in split.back]}


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32), players=st.integers(2, 4), rules=FLAGS)
def test_a_match_of_random_arrangements_is_zero_sum_and_totals_add_up(seed, players, rules):
    rng = random.Random(seed)
    e = ThirteenEngine({"deals": 3, "players": players, **rules}, random.Random(seed))
    e.start()
    while not e.finished:
        for s in e.to_act:
            e.play_for(s, _any(e, s, rng))
    r = e.result()
    assert sum(r["totals"]) == 0
    assert r["totals"] == [sum(d[s] for d in r["deal_scores"]) for s in range(players)]
    assert sorted(r["ranks"])[0] == 1


def _reference_strength():
    """The sample bot's tuple ranking: an independent implementation."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[3] / "sample_bots" / "python_thirteen" / "bot.py"
    spec = importlib.util.spec_from_file_location("python_thirteen_reference", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.strength


REFERENCE = _reference_strength()


def _sign(x):
    return (x > 0) - (x < 0)


@settings(max_examples=500, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    sizes=st.sampled_from([(5, 5), (3, 3), (3, 5), (5, 3)]),
    wheel=st.sampled_from(["lowest", "second_highest"]),
)
def test_table_evaluator_orders_hands_like_an_independent_implementation(seed, sizes, wheel):
    from arena.games.thirteen.evaluator import hand_strength

    rng = random.Random(seed)
    cards = rng.sample(DECK, sizes[0] + sizes[1])
    a, b = cards[: sizes[0]], cards[sizes[0]:]
    ours = _sign(hand_strength(a, wheel) - hand_strength(b, wheel))
    ref_a, ref_b = REFERENCE([CARD_STR[c] for c in a], wheel), REFERENCE([CARD_STR[c] for c in b], wheel)
    assert ours == _sign((ref_a > ref_b) - (ref_a < ref_b))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32), rules=FLAGS, perm_seed=st.integers(0, 1000))
def test_a_deal_played_with_the_hands_permuted_permutes_the_showdown(seed, rules, perm_seed):
    rng = random.Random(seed)
    deck = list(DECK)
    rng.shuffle(deck)
    hands = deal_hands(tuple(deck))
    splits = [random_split(h, rng) for h in hands]
    perm = list(range(4))
    random.Random(perm_seed).shuffle(perm)  # seat i of the second match holds hand perm[i]
    permuted_deck = [0] * 52
    for i in range(52):
        permuted_deck[i] = hands[perm[i % 4]][i // 4]

    def play(deck_cards, seat_splits):
        e = ThirteenEngine({"deals": 1, **rules}, None, [[CARD_STR[c] for c in deck_cards]])
        e.start()
        for s, split in enumerate(seat_splits):
            events = e.play_for(s, {k: [CARD_STR[c] for c in getattr(split, k)] for k in ("front", "middle", "back")})
        return events[-1]

    first = play(deck, splits)
    second = play(permuted_deck, [splits[p] for p in perm])
    for i in range(4):
        assert second.scores[i] == first.scores[perm[i]]
        assert second.fouled[i] == first.fouled[perm[i]]
        for j in range(4):
            assert second.pairs[i][j] == first.pairs[perm[i]][perm[j]]
