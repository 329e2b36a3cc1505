"""Record builders shared by the storage tests (and the crash worker)."""

from __future__ import annotations

from arena.storage.base import MatchRecord, MatchStatus, SeatFaults, StoredEvent

PLAYERS = ["ann", "bob", "cid", "dan", "eve"]


def match(match_id: str, *, started_at: float = 1000.0, players: list[str] | None = None,
          tournament_id: str | None = None, seed: str | None = "s:0") -> MatchRecord:
    return MatchRecord(id=match_id, game="muushig", players=list(players or PLAYERS),
                       rules={"max_hands": 200}, limits={"decision_ms": 1000, "bank_ms": 0},
                       status=MatchStatus.RUNNING, started_at=started_at,
                       tournament_id=tournament_id, seed=seed)


def events(start: int, count: int) -> list[StoredEvent]:
    return [StoredEvent(seq=i, at=2000.0 + i, data={"kind": "play", "seat": i % 5, "n": i})
            for i in range(start, start + count)]


def result(stars: list[int], sums: list[int], ranks: list[int]) -> dict:
    return {"stars": stars, "final_scores": [[s] * 5 for s in sums], "sums": sums,
            "ranks": ranks}


RESULT = result([2, 1, 1, 1, 0], [10, 20, 30, 40, 50], [1, 2, 3, 4, 5])
REVEAL = [{"round": 0, "hand": 0, "salt": "x", "deck": ["AS"] * 32}]
FAULTS = [SeatFaults(), SeatFaults(timeouts=2), SeatFaults(), SeatFaults(illegal=1),
          SeatFaults(disconnects=1, autopilot=True)]
LATENCY = [[1.5, 2.0], [3.0], [], [4.0], [5.0, 6.0]]


def finish_kwargs(finished_at: float = 1100.0) -> dict:
    return {"result": RESULT, "reveal": REVEAL, "faults": FAULTS, "latency_ms": LATENCY,
            "finished_at": finished_at}
