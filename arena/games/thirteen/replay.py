"""Re-running a stored match: (rules, decks, arrangements) -> the same engine.

The stored log is the ``for_record()`` dicts of the events in order (the
server's own records are skipped): ``deal`` holds each deck and every
``arranged`` record holds its seat's rows, in the order they were applied.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from arena.games.base import GameError
from arena.games.thirteen.engine import ThirteenEngine


class ReplayError(GameError):
    """A recorded match does not replay: the log is inconsistent."""


def replay(
    rules: Mapping[str, Any] | None, decks: list[list[str]], actions: Iterable[tuple[int, Any]]
) -> ThirteenEngine:
    """A started engine after applying the (seat, arrangement) pairs in order."""
    engine = ThirteenEngine(dict(rules) if rules is not None else None, None, decks)
    engine.start()
    for i, (seat, action) in enumerate(actions):
        if seat not in engine.to_act:
            raise ReplayError(f"action {i} (seat {seat}) is not owed now (to act: {list(engine.to_act)})")
        engine.play_for(seat, action)
    return engine


def inputs_from_record(log: Iterable[Mapping[str, Any]]) -> tuple[list[list[str]], list[tuple[int, Any]]]:
    """(decks, [(seat, arrangement)]) rebuilt from a recorded log, in order."""
    decks: list[list[str]] = []
    actions: list[tuple[int, Any]] = []
    for rec in log:
        kind = rec.get("kind")
        if kind == "deal":
            decks.append(list(rec["deck"]))
        elif kind == "arranged":
            if "front" not in rec:
                raise ReplayError("an arranged record without its rows: not a for_record() log")
            actions.append((rec["seat"], {k: list(rec[k]) for k in ("front", "middle", "back")}))
    return decks, actions


def replay_record(rules: Mapping[str, Any] | None, log: Iterable[Mapping[str, Any]]) -> ThirteenEngine:
    decks, actions = inputs_from_record(log)
    return replay(rules, decks, actions)
