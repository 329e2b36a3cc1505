"""How a schedule went, as ``arena tournament`` reports it at the end, whether
one process played it (arena/tournament/command.py) or workers did
(arena/tournament/on_workers.py)."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field


@dataclass
class Outcome:
    """How the schedule went, for the lines printed at the end."""

    complete: bool
    deal_key: bytes
    faults: list[str] = field(default_factory=list)
    stopped_separated: bool = False


def print_interrupted(tid: str, db: str) -> None:
    print(f"tournament interrupted; resume with: arena tournament resume {tid} --db {db}",
          file=sys.stderr)
