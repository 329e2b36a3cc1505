"""One bot's figures in finished matches (pure functions over match records)."""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from typing import Any

from arena.storage.base import MatchRecord
from arena.web.ladders import primary_result

Wire = dict[str, Any]


def latency_summary(samples: Iterable[float]) -> Wire:
    values = sorted(samples)
    if not values:
        return {"decisions": 0, "median_ms": None, "p90_ms": None, "max_ms": None}
    return {"decisions": len(values), "median_ms": round(statistics.median(values), 3),
            "p90_ms": round(values[min(len(values) - 1, int(0.9 * len(values)))], 3),
            "max_ms": round(values[-1], 3)}


def fault_fields(data: Wire) -> Wire:
    # Whitelisted so a richer record can never carry a card out of here.
    return {k: data[k] for k in ("kind", "seat", "phase", "reason") if k in data}


def bot_line(m: MatchRecord, name: str) -> Wire:
    """One bot's figures in one finished match (its best seat if it sat twice)."""
    result = m.result or {}
    seats = [i for i, who in enumerate(m.players) if who == name]
    ranks = result.get("ranks") or []
    return seat_line(m, min(seats, key=lambda s: ranks[s] if s < len(ranks) else 99))


def seat_lines(m: MatchRecord, name: str) -> list[Wire]:
    """The figures of every seat ``name`` held in ``m``: a house entrant
    counts once per seat, as the standings count it."""
    return [seat_line(m, seat) for seat, who in enumerate(m.players) if who == name]


def seat_line(m: MatchRecord, seat: int) -> Wire:
    result = m.result or {}

    def pick(key: str) -> Any:
        values = result.get(key) or []
        return values[seat] if seat < len(values) else None

    return {"match": m.id, "game": m.game, "tournament_id": m.tournament_id,
            "finished_at": m.finished_at, "seat": seat, "players": list(m.players),
            "place": pick("ranks"), "points": pick(primary_result(m.game).result_key),
            "stars": (pick("stars") or 0) if "stars" in result else None, "sum": pick("sums")}


def fault_totals(matches: list[MatchRecord], name: str) -> Wire:
    totals = {"timeouts": 0, "illegal": 0, "disconnects": 0, "autopilot_matches": 0}
    for m in matches:
        for seat, who in enumerate(m.players):
            if who != name or not m.faults or seat >= len(m.faults):
                continue
            f = m.faults[seat]
            totals["timeouts"] += f.timeouts
            totals["illegal"] += f.illegal
            totals["disconnects"] += f.disconnects
            totals["autopilot_matches"] += int(f.autopilot)
    return totals
