"""Golden playthroughs: scripted Muushig matches written out step by step.

Each file records, for every step, the seat to act, the phase, the legal
answers, the acting seat's observation, the chosen answer and every event
(record form) that followed. ``test_golden.py`` replays the scripts and
diffs the text; after an intended change of the engine, regenerate with

    python -m tests.golden.regen

and review the diff like any other change.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

from arena.games.muushig import SPEC, MuushigEngine

HERE = Path(__file__).parent

# name -> (rules, deck seed, who chooses: "random:<seed>" or "heuristic")
SCRIPTS: dict[str, tuple[dict[str, Any], int, str]] = {
    "muushig_random_short": ({"max_hands": 1}, 11, "random:1"),
    "muushig_heuristic_short": ({"max_hands": 1}, 12, "heuristic"),
    "muushig_variants": (
        {"players": 3, "last_two_forced": True, "auto_enter_after_folds": 3, "trump_ace_first_lead": True,
         "max_hands": 2},
        13,
        "random:2",
    ),
}


def _j(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def playthrough(rules: dict[str, Any], seed: int, chooser: str) -> str:
    engine = MuushigEngine(rules, random.Random(seed))
    if chooser.startswith("random:"):
        pick = random.Random(int(chooser.split(":")[1]))

        def choose(phase: str, legal: list, state: dict) -> Any:
            return legal[pick.randrange(len(legal))]
    else:
        bots = [SPEC.house_bots[chooser](random.Random(s)) for s in range(engine.n_seats)]

        def choose(phase: str, legal: list, state: dict) -> Any:
            return bots[state["seat"]](phase, legal, state)

    lines = [f"# rules {_j(engine.rules)} deck-seed {seed} chooser {chooser}"]
    lines += [f"event {_j(e.for_record())}" for e in engine.start()]
    step = 0
    while not engine.finished:
        seat, phase = engine.current_seat, engine.phase
        legal = engine.legal_actions()
        state = engine.observation(seat)
        action = choose(phase, legal, state)
        lines.append(f"## step {step} seat {seat} phase {phase}")
        lines.append(f"legal {_j(legal)}")
        lines.append(f"state {_j(state)}")
        lines.append(f"action {_j(action)}")
        lines += [f"event {_j(e.for_record())}" for e in engine.play(action)]
        step += 1
    lines.append(f"# result {_j(engine.result())}")
    return "\n".join(lines) + "\n"


def golden_path(name: str) -> Path:
    return HERE / f"{name}.txt"


def main() -> int:
    for name, (rules, seed, chooser) in SCRIPTS.items():
        text = playthrough(rules, seed, chooser)
        golden_path(name).write_text(text, encoding="utf-8")
        sys.stdout.write(f"wrote {golden_path(name).name}: {text.count(chr(10))} lines\n")
    from tests.games.thirteen.golden import write_all as write_thirteen

    for file_name, n_lines in write_thirteen():
        sys.stdout.write(f"wrote {file_name}: {n_lines} lines\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
