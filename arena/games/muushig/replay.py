"""Re-running a stored match: (rules, decks, actions) → the same engine.

The stored log of a match is the ``for_record()`` dicts of its events in
order (plus the server's own records, which are skipped here). The engine's
records alone determine the replay: ``deal`` holds each deck, and every
unforced decision, exchange, take and play holds the action that caused it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from arena.games.base import GameError
from arena.games.muushig.engine import MuushigEngine


class ReplayError(GameError):
    """A recorded match does not replay: the log is inconsistent."""


def replay(rules: Mapping[str, Any] | None, decks: list[list[str]], actions: Iterable[Any]) -> MuushigEngine:
    """A started engine after applying ``actions`` in order to ``decks``."""
    engine = MuushigEngine(dict(rules) if rules is not None else None, None, decks)
    engine.start()
    for i, action in enumerate(actions):
        if engine.current_seat is None:
            raise ReplayError(f"action {i} ({action!r}) comes after the end of the match")
        engine.play(action)
    return engine


def inputs_from_record(log: Iterable[Mapping[str, Any]]) -> tuple[list[list[str]], list[Any]]:
    """(decks, actions) rebuilt from a recorded event log, in order."""
    decks: list[list[str]] = []
    actions: list[Any] = []
    for rec in log:
        kind = rec.get("kind")
        if kind == "deal":
            decks.append(list(rec["deck"]))
        elif kind == "decision":
            if not rec["forced"]:
                actions.append(rec["choice"])
        elif kind == "exchange":
            if "discarded" not in rec:
                raise ReplayError("an exchange record without its discards: not a for_record() log")
            actions.append(list(rec["discarded"]))
        elif kind == "take":
            if "discarded" not in rec:
                raise ReplayError("a take record without its discard: not a for_record() log")
            actions.append(rec["discarded"])
        elif kind == "play":
            actions.append(rec["card"])
    return decks, actions


def replay_steps(log: Iterable[Mapping[str, Any]]) -> tuple[list[list[str]],
                                                              list[tuple[None, Any]]]:
    """``inputs_from_record`` as ``GameSpec.replay_inputs`` gives it: every
    action is the seat to act's (None)."""
    decks, actions = inputs_from_record(log)
    return decks, [(None, action) for action in actions]


def replay_record(rules: Mapping[str, Any] | None, log: Iterable[Mapping[str, Any]]) -> MuushigEngine:
    """Replay a recorded log; the result has the same events and result."""
    decks, actions = inputs_from_record(log)
    return replay(rules, decks, actions)
