"""Check, then apply: ``apply`` takes only what ``check_action`` /
``check_for`` returned, and only for the decision it was checked in.

A checked action names its match, seat and decision; applied anywhere
else (after the state moved on, a second time, or to another match) it is
refused instead of being applied to whichever seat is to act then.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.games.base import CheckedAction, StaleActionError
from arena.games.muushig import MuushigEngine
from arena.games.thirteen import ThirteenEngine


def _muushig(seed: int = 3) -> MuushigEngine:
    engine = MuushigEngine(None, random.Random(seed))
    engine.start()
    return engine


def test_a_checked_decision_is_not_applied_again_to_the_next_seat():
    engine = _muushig()
    first = engine.current_seat
    checked = engine.check_action("enter")
    engine.apply(checked)
    assert engine.current_seat != first and engine.phase == "decide"
    with pytest.raises(StaleActionError, match="checked for decision"):
        engine.apply(checked)  # seat `first`'s answer, not the next seat's
    assert engine.current_seat != first


def test_a_check_from_before_the_state_moved_on_is_refused():
    engine = _muushig()
    stale = engine.check_action("enter")
    engine.apply(engine.check_action("fold"))
    with pytest.raises(StaleActionError, match="checked for decision"):
        engine.apply(stale)


def test_a_checked_action_of_another_match_is_refused():
    one, other = _muushig(), _muushig()
    checked = one.check_action("fold")
    with pytest.raises(StaleActionError, match="another match"):
        other.apply(checked)
    assert other.observation(other.current_seat) == one.observation(one.current_seat)


def _seen(engine: MuushigEngine | ThirteenEngine) -> list[dict]:
    return [engine.observation(s) for s in range(engine.n_seats)]


FAST = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(seed=st.integers(0, 2**32 - 1))
def test_every_applied_or_outdated_muushig_check_is_refused_and_changes_nothing(seed):
    engine = MuushigEngine(None, random.Random(seed))
    engine.start()
    choice = random.Random(~seed).choice
    old: list[CheckedAction[int]] = []
    while not engine.finished:
        legal = engine.legal_actions()
        old.append(engine.check_action(choice(legal)))  # checked, never applied
        checked = engine.check_action(choice(legal))
        engine.apply(checked)
        old.append(checked)
        seen, to_act = _seen(engine), engine.to_act
        for stale in (old[0], old[-2], old[-1]):
            with pytest.raises(StaleActionError):
                engine.apply(stale)
        assert (_seen(engine), engine.to_act) == (seen, to_act)


@FAST
@given(seed=st.integers(0, 2**32 - 1), players=st.integers(2, 4))
def test_every_applied_or_outdated_thirteen_check_is_refused_and_changes_nothing(seed, players):
    engine = ThirteenEngine({"players": players, "deals": 2}, random.Random(seed))
    engine.start()
    old: list[CheckedAction[object]] = []
    while not engine.finished:
        seat = random.Random(seed + len(old)).choice(engine.to_act)
        checked = engine.check_for(seat, engine.default_for(seat))
        engine.apply(checked)
        old.append(checked)
        seen, to_act = _seen(engine), engine.to_act
        for stale in old:
            with pytest.raises(StaleActionError):
                engine.apply(stale)
        assert (_seen(engine), engine.to_act) == (seen, to_act)


def test_a_check_of_one_game_is_refused_by_the_other():
    muushig, thirteen = _muushig(), _thirteen()
    with pytest.raises(StaleActionError, match="another match"):
        thirteen.apply(muushig.check_action("fold"))
    with pytest.raises(StaleActionError, match="another match"):
        muushig.apply(thirteen.check_for(0, thirteen.default_for(0)))


def _thirteen() -> ThirteenEngine:
    engine = ThirteenEngine({"deals": 2}, random.Random(1))
    engine.start()
    return engine


def test_a_thirteen_arrangement_is_applied_once():
    engine = _thirteen()
    checked = engine.check_for(0, engine.default_for(0))
    engine.apply(checked)
    with pytest.raises(StaleActionError, match="already applied"):
        engine.apply(checked)


def test_a_thirteen_arrangement_checked_in_one_deal_is_refused_in_the_next():
    engine = _thirteen()
    stale = engine.check_for(3, engine.default_for(3))
    for seat in (0, 1, 2):
        engine.apply(engine.check_for(seat, engine.default_for(seat)))
    engine.apply(engine.check_for(3, engine.default_for(3)))  # the deal ends
    assert engine.to_act == (0, 1, 2, 3)
    with pytest.raises(StaleActionError, match="checked for deal 0, and deal 1 is pending"):
        engine.apply(stale)
