"""The engine keeps each hand's deck for the reveal in a compact form:
memory that grows with every hand of a match must stay small."""

from __future__ import annotations

import random
import tracemalloc

from arena.games import get_game


def test_the_decks_kept_for_the_reveal_cost_little_per_hand():
    spec = get_game("muushig")
    engine = spec.new_match(None, random.Random(7), None)
    rng = random.Random(1)
    engine.start()
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        while not engine.finished:
            engine.play(rng.choice(engine.legal_actions()))
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    hands = len(engine.deals())
    assert hands > 5
    kept = sum(stat.size_diff for stat in after.compare_to(before, "filename")
               if "muushig" in stat.traceback[0].filename)
    # A deck is 32 card codes: about 100 bytes as bytes and a small tuple.
    assert kept / hands < 250, f"{kept / hands:.0f} bytes kept per hand"


def test_the_reveal_lists_every_deck_as_dealt():
    spec = get_game("muushig")
    engine = spec.new_match(None, random.Random(3), None)
    seen = []
    rng = random.Random(2)
    for event in engine.start():
        if event.kind == "deal":
            seen.append(event.deal)
    while not engine.finished:
        for event in engine.play(rng.choice(engine.legal_actions())):
            if event.kind == "deal":
                seen.append(event.deal)
    assert engine.deals() == seen
    assert all(d.label == {"round": d.round, "hand": d.hand} for d in engine.deals())
