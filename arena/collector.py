"""The garbage collector of a serving process: set for many tables, and watched.

CPython's default thresholds (700, 10, 10) suit short programs. At 200
tables the server's heap holds some 90,000 tracked objects, and two things
go wrong with them:

- a young collection walks far more than 700 objects: the count that
  triggers it is allocations *minus deallocations*, and the steady death of
  older objects (each hand's state) keeps it low while the young list grows
  to 10,000-16,000 objects, so each one took 3-9 ms of CPU;
- a full collection walks everything, the interpreter's own startup objects
  included, and took some 60 ms: every table waiting on the loop then, one
  turn in a few hundred, had that added to its latency.

So a serving process, once its modules are imported, moves what exists to
the permanent generation (:func:`gc.freeze`: never walked again; startup
objects live as long as the process anyway) and raises the thresholds.
Measured at 200 tables (``bench/README.md``, step 14): 121 young
collections instead of 311 in the same play, no full one while playing
(the two of a run come at start: one during the imports, one here), the
collector's CPU from about 1.9 to 0.5 µs per decision, its longest pause
from 48-63 to 23-29 ms. Reference cycles are still collected, later; the
RSS per table did not grow.

:class:`CollectorWatch` records each collection's pause per generation, so
``/api/health`` can show the longest one an operator's players waited for.
"""

from __future__ import annotations

import gc
import time
from dataclasses import dataclass, field
from typing import Any, Final

# (young, middle, old): collections of the younger generation per
# collection of the next, as gc.set_threshold takes them.
SERVING_THRESHOLDS: Final = (50_000, 20, 100)


def tune_for_serving() -> None:
    """Freeze what exists now and raise the thresholds: call once in a
    serving process, after its imports, before it plays."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*SERVING_THRESHOLDS)
    WATCH.start()


@dataclass
class GenerationPauses:
    collections: int = 0
    total_s: float = 0.0
    longest_s: float = 0.0


@dataclass
class CollectorWatch:
    """Pauses of the collector, per generation, from ``gc.callbacks``."""

    generations: list[GenerationPauses] = field(
        default_factory=lambda: [GenerationPauses() for _ in range(3)])
    _started_at: float | None = None
    _watching: bool = False

    def start(self) -> None:
        if not self._watching:
            gc.callbacks.append(self._callback)
            self._watching = True

    def stop(self) -> None:
        if self._watching:
            gc.callbacks.remove(self._callback)
            self._watching = False

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started_at = time.perf_counter()
            return
        if self._started_at is None:
            return
        pause = time.perf_counter() - self._started_at
        self._started_at = None
        counts = self.generations[info["generation"]]
        counts.collections += 1
        counts.total_s += pause
        if pause > counts.longest_s:
            counts.longest_s = pause

    def snapshot(self) -> dict[str, Any]:
        """The collector's settings and what it cost, for ``/api/health``."""
        return {
            "thresholds": list(gc.get_threshold()),
            "frozen_objects": gc.get_freeze_count(),
            "watched": self._watching,
            "generations": [{"collections": g.collections,
                             "pause_total_ms": round(g.total_s * 1000, 3),
                             "pause_longest_ms": round(g.longest_s * 1000, 3)}
                            for g in self.generations],
        }


# One collector per process, so one watch.
WATCH: Final = CollectorWatch()
