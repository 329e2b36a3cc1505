"""Verdicts shared by the checks of every game."""

from __future__ import annotations

from arena.checkbot.games import GameScript
from arena.checkbot.report import Verdict
from arena.checkbot.session import Pending, Session, short

# A check passes (True), fails (False), or passes with a warning (Verdict.WARN).
Outcome = tuple[bool | Verdict, str]


def game_of(s: Session) -> GameScript:
    assert s.game is not None, "the runner sets the session's game"
    return s.game


class Abort(Exception):
    """The run cannot go on (no connection); the message says why."""


def judge(p: Pending) -> Outcome:
    """Was the first answer to ``p`` legal, with the right id and match?"""
    if not p.answers:
        return False, f"no answer to {p.label} within {p.deadline_ms} ms (the default was applied)"
    first = p.answers[0]
    if not first.legal:
        if p.ask.constraints is not None:
            return False, f"answered {p.label} with {short(first.action, 120)}, which is refused: {first.reason}"
        return False, f"answered {p.label} with {short(first.action)}, which is not legal; legal: {short(p.ask.legal, 120)}"
    if first.fallback is not None:
        return False, f"{p.label}: {first.describe_fallback()}"
    if p.ask.constraints is not None:
        return True, f"answered {arrangement_text(first.action)} (valid) in {first.latency_ms:.0f} ms"
    return True, f"answered {short(first.action)} (legal) in {first.latency_ms:.0f} ms"


def arrangement_text(action: object) -> str:
    """A valid arrangement as a bot author reads it: its three rows."""
    assert isinstance(action, dict)
    return " | ".join(f"{row} {' '.join(action[row])}" for row in ("front", "middle", "back"))


def strays_since(s: Session, mark: int) -> str:
    """What the bot sent that it should not have, since ``mark``."""
    return "; ".join(s.notes[mark:][:3])
