"""Run the engine and the reference side by side on the same decks and the
same choices; report the first difference."""

from __future__ import annotations

import random
from typing import Any

from arena.games.muushig import MuushigEngine

from .reference import ReferenceMatch


def run_engine(seed: int, rules: dict[str, Any] | None = None) -> tuple[MuushigEngine, list, list]:
    """A match with random legal choices; returns (engine, steps, records)."""
    choose = random.Random(seed * 7919 + 1)
    engine = MuushigEngine(rules, random.Random(seed))
    records = [e.for_record() for e in engine.start()]
    steps = []
    while not engine.finished:
        legal = engine.legal_actions()
        action = legal[choose.randrange(len(legal))]
        steps.append((engine.current_seat, engine.phase, legal, action))
        records += [e.for_record() for e in engine.play(action)]
    return engine, steps, records


def compare_with_reference(seed: int, rules: dict[str, Any] | None = None) -> None:
    engine, steps, records = run_engine(seed, rules)
    ref = ReferenceMatch([list(d.deck) for d in engine.deals()], rules)
    for i, (seat, phase, legal, action) in enumerate(steps):
        assert ref.pending is not None, f"seed {seed}: reference finished early at step {i}"
        assert ref.pending == (seat, str(phase), legal), f"seed {seed} step {i}: {ref.pending} != {(seat, phase, legal)}"
        ref.act(action)
    assert ref.pending is None, f"seed {seed}: reference still asks {ref.pending}"
    for i, (mine, theirs) in enumerate(zip(records, ref.events)):
        assert mine == theirs, f"seed {seed} event {i}: {mine} != {theirs}"
    assert len(records) == len(ref.events)
    assert engine.result() == ref.result()
