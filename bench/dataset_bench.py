"""The dataset export over a big store: matches per second and peak memory.

Fills a SQLite store with N finished matches (a few real matches of each
game played by house bots through the engine, stored again under new ids),
then runs ``arena.dataset.export_dataset`` on it as ``arena export
--dataset`` does and reports the rate, then the traced peak of Python
memory of a second, traced export (bounded: it must not grow with N).

    ARENA_PURE_PYTHON=1 python bench/dataset_bench.py --matches 10000
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
import tracemalloc
from pathlib import Path

from arena.dataset import export_dataset
from arena.games import get_game
from arena.live import LiveHub
from arena.storage import open_store
from arena.storage.base import MatchRecord, MatchStatus, SeatFaults, StoredEvent
from arena.web.queries import Queries
from protocol.deals import commitment


def played(game: str, seed: int) -> tuple[dict, list[dict], dict, list[dict]]:
    """(rules, records, result, reveal) of a house-bot match, as stored."""
    spec = get_game(game)
    engine = spec.new_match(None, random.Random(seed), None)
    bots = [spec.house_bots[spec.default_house_bot](random.Random(seed + i))
            for i in range(engine.n_seats)]
    records: list[dict] = []
    reveal: list[dict] = []

    def keep(events) -> None:
        for e in events:
            data = e.for_record()
            records.append(data)
            if data["kind"] == "deal":
                label = {k: v for k, v in data.items() if k not in ("kind", "deck")}
                salt = f"{seed:032x}"
                records.append({"kind": "commit", **label,
                                "commitment": commitment(salt, data["deck"])})
                reveal.append({**label, "salt": salt, "deck": data["deck"]})

    keep(engine.start())
    while not engine.finished:
        seat = engine.to_act[0]
        options = engine.request_for(seat)
        legal = options.get("legal", options.get("constraints"))
        keep(engine.play_for(seat, bots[seat](engine.phase_for(seat), legal,
                                               engine.observation(seat))))
    return engine.rules, records, engine.result(), reveal


def fill(store, n: int) -> None:
    samples = [(g, *played(g, s)) for g in ("muushig", "thirteen") for s in range(3)]
    for i in range(n):
        game, rules, records, result, reveal = samples[i % len(samples)]
        mid = f"m{i:06d}"
        seats = len(result["ranks"])
        store.create_match(MatchRecord(id=mid, game=game, players=[f"b{j}" for j in range(seats)],
                                       rules=rules, limits={}, status=MatchStatus.RUNNING,
                                       started_at=1e9 + i))
        store.append_events(mid, [StoredEvent(k, 1e9 + i, d) for k, d in enumerate(records)])
        store.finish_match(mid, result=result, reveal=reveal,
                           faults=[SeatFaults() for _ in range(seats)],
                           latency_ms=[[] for _ in range(seats)], finished_at=1e9 + i + 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--matches", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        store = open_store(Path(folder) / "arena.db")
        t0 = time.monotonic()
        fill(store, args.matches)
        filled = time.monotonic() - t0
        queries = Queries(store, LiveHub())
        t0 = time.monotonic()
        report = export_dataset(store, queries.match_detail, Path(folder) / "out")
        seconds = time.monotonic() - t0
        # A second pass traced (tracing slows it): the peak of Python memory.
        tracemalloc.start()
        export_dataset(store, queries.match_detail, Path(folder) / "traced")
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        size = sum(p.stat().st_size for p in (Path(folder) / "out").iterdir())
        queries.close()
        store.close()
    print(json.dumps({"matches": report.matches, "fill_s": round(filled, 1),
                      "export_s": round(seconds, 1),
                      "matches_per_s": round(report.matches / seconds),
                      "peak_traced_mb": round(peak / 2**20, 1),
                      "output_mb": round(size / 2**20, 1)}))


if __name__ == "__main__":
    main()
