"""Golden playthroughs of thirteen-card matches, written out step by step.

Each file records every request (seat, phase, constraints, state), the
answer, any refusal with its reason, and every event (record form). The
test replays the scripts and diffs the text; after an intended change of
the engine, regenerate with ``python -m tests.golden.regen`` (which writes
these too) and review the diff.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from arena.games.base import IllegalActionError
from arena.games.thirteen import SPEC, ThirteenEngine

GOLDEN_DIR = Path(__file__).resolve().parents[2] / "golden"

# name -> (rules, deck seed, chooser per seat: a house bot name or "any" =
# an arbitrary split, fouled or not)
SCRIPTS: dict[str, tuple[dict[str, Any], int, tuple[str, ...]]] = {
    "thirteen_house_bots": ({"deals": 3}, 21, ("strong", "random", "strong", "random")),
    "thirteen_fouls_penalized": ({"deals": 2, "players": 3}, 22, ("strong", "any", "any")),
    "thirteen_fouls_rejected": ({"deals": 2, "players": 2, "foul_policy": "reject"}, 23, ("any", "strong")),
    "thirteen_flags": (
        {"deals": 2, "players": 3, "wheel": "second_highest", "shoot": "double", "mid_full_house_bonus": 1},
        24,
        ("strong", "random", "any"),
    ),
}


def _j(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _any_split(cards: list[str], rng: random.Random) -> dict[str, list[str]]:
    shuffled = list(cards)
    rng.shuffle(shuffled)
    return {"front": shuffled[:3], "middle": shuffled[3:8], "back": shuffled[8:]}


def playthrough(rules: dict[str, Any], seed: int, choosers: tuple[str, ...]) -> str:
    engine = ThirteenEngine(rules, random.Random(seed))
    pick = random.Random(seed + 1000)
    # House bots get the match's rules, as a remote bot has match_start.rules.
    bots = [
        None if c == "any" else SPEC.house_bots[c](random.Random(s), engine.rules) for s, c in enumerate(choosers)
    ]
    lines = [f"# rules {_j(engine.rules)} deck-seed {seed} choosers {_j(list(choosers))}"]
    lines += [f"event {_j(e.for_record())}" for e in engine.start()]
    step = 0
    while not engine.finished:
        # Answer in a fixed but not ascending order: the last seat first.
        seat = engine.to_act[-1]
        phase, request, state = engine.phase_for(seat), engine.request_for(seat), engine.observation(seat)
        lines.append(f"## step {step} seat {seat} phase {phase} to_act {_j(list(engine.to_act))}")
        lines.append(f"request {_j(request)}")
        lines.append(f"state {_j(state)}")
        bot = bots[seat]
        action = _any_split(state["cards"], pick) if bot is None else bot(phase, request["constraints"], state)
        try:
            engine.check_for(seat, action)
        except IllegalActionError as exc:
            lines.append(f"refused {_j(action)}: {exc}")
            action = engine.default_for(seat)
            lines.append(f"default {_j(action)}")
        lines.append(f"action {_j(action)}")
        lines += [f"event {_j(e.for_record())}" for e in engine.play_for(seat, action)]
        step += 1
    lines.append(f"# result {_j(engine.result())}")
    return "\n".join(lines) + "\n"


def golden_path(name: str) -> Path:
    return GOLDEN_DIR / f"{name}.txt"


def write_all() -> list[tuple[str, int]]:
    written = []
    for name, (rules, seed, choosers) in SCRIPTS.items():
        text = playthrough(rules, seed, choosers)
        golden_path(name).write_text(text, encoding="utf-8")
        written.append((golden_path(name).name, text.count("\n")))
    return written
