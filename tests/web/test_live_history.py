"""The public events of a running match, rebuilt from its stored records,
are the ones the live hub showed: same events, same order, same numbers."""

from __future__ import annotations

from typing import Any

import pytest

from arena.live_history import HistoryError, join, public_history
from .live_match import play


@pytest.mark.parametrize("game,rules", [("muushig", {"max_hands": 3}), ("thirteen", None)])
def test_the_stored_records_rebuild_every_public_event_in_order(game: str, rules: Any) -> None:
    kinds: set[str] = set()
    for match_rules, stored, shown in play(game, rules, seed=5):
        history = public_history(game, match_rules, stored)
        assert [e["data"] for e in history] == shown
        assert [e["seq"] for e in history] == list(range(len(shown)))
        kinds |= {e["data"]["kind"] for e in history}
    assert {"commit", "timeout", "autopilot"} <= kinds  # the server's own events too


def test_a_log_the_engine_does_not_replay_is_refused() -> None:
    _, stored, _ = list(play("muushig", {"max_hands": 1}, seed=2))[-1]
    swapped = [(seq, at, {**data, "kind": "trick"} if data.get("kind") == "play" else data)
               for seq, at, data in stored]
    with pytest.raises(HistoryError):
        public_history("muushig", None, swapped)
    with pytest.raises(HistoryError):
        public_history("no-such-game", None, stored)


def entries(first: int, last: int, at: float) -> list[dict[str, Any]]:
    return [{"seq": s, "at": at, "data": {"i": s}} for s in range(first, last)]


def test_join_takes_the_history_up_to_the_tail_then_the_tail() -> None:
    joined = join(entries(0, 8, at=1.0), entries(5, 10, at=2.0))
    assert [e["seq"] for e in joined] == list(range(10))
    assert [e["at"] for e in joined] == [1.0] * 5 + [2.0] * 5  # the hub's times where it has them
    assert join(entries(0, 5, at=1.0), entries(5, 7, at=2.0)) == entries(0, 5, 1.0) + entries(5, 7, 2.0)
    assert join(entries(0, 3, at=1.0), []) == entries(0, 3, 1.0)


def test_join_refuses_to_leave_a_gap() -> None:
    assert join(entries(0, 4, at=1.0), entries(6, 9, at=2.0)) is None
