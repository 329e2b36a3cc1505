"""The stage machine: every change the engine makes is one the table allows."""

from __future__ import annotations

import random

import pytest

from arena.games.muushig import MuushigEngine
from arena.games.muushig.phases import DECIDE, EXCHANGE, OVER, PLAY, TAKE
from arena.games.muushig.state import TRANSITIONS, StageError, check_transition


def test_a_stage_change_outside_the_table_is_refused() -> None:
    with pytest.raises(StageError):
        check_transition(EXCHANGE, PLAY)  # the take offer always comes between
    with pytest.raises(StageError):
        check_transition(OVER, PLAY)


class WatchedEngine(MuushigEngine):
    """Records every stage change, however many happen in one ``apply``."""

    changes: set[tuple[int, int]] = set()

    def __setattr__(self, name: str, value: object) -> None:
        if name == "stage" and "stage" in self.__dict__:
            WatchedEngine.changes.add((self.__dict__["stage"], value))  # type: ignore[arg-type]
        super().__setattr__(name, value)


@pytest.mark.source_only  # subclasses or patches a compiled class
def test_random_matches_only_make_allowed_changes() -> None:
    WatchedEngine.changes = seen = set()
    for seed in range(30):
        engine = WatchedEngine({"players": 2 + seed % 4}, random.Random(seed))
        choice = random.Random(-seed).choice
        engine.start()
        while not engine.finished:
            engine.apply_code(choice(engine.legal_codes()))
    assert seen and all(new in TRANSITIONS[old] for old, new in seen), sorted(seen)
    # Random play reaches every stage.
    assert {new for _, new in seen} >= {DECIDE, EXCHANGE, TAKE, PLAY, OVER}
