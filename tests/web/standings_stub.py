"""Stand-in for ``arena.tournament.standings`` while that module is written.

Installed by ``conftest.py`` only when the real module cannot be imported;
it follows the same contract (rows with ``to_dict()``, ``rating_history``)
with simple arithmetic instead of a rating system.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass

from arena.storage.base import MatchRecord


@dataclass
class StandingRow:
    rank: int
    bot: str
    matches: int
    stars: int
    score_sum: int
    wins: int
    avg_place: float
    rating_mu: float
    rating_sigma: float
    rating: float
    stars_per_match: float
    stars_ci_low: float
    stars_ci_high: float
    timeouts: int
    illegal: int
    disconnects: int
    median_latency_ms: float | None

    def to_dict(self) -> dict:
        return asdict(self)


def compute_standings(matches: Iterable[MatchRecord]) -> list[StandingRow]:
    acc: dict[str, dict] = {}
    for m in matches:
        res = m.result or {}
        for seat, bot in enumerate(m.players):
            a = acc.setdefault(bot, {"matches": 0, "stars": 0, "sum": 0, "wins": 0, "places": 0,
                                     "timeouts": 0, "illegal": 0, "disconnects": 0})
            a["matches"] += 1
            a["stars"] += res["stars"][seat]
            a["sum"] += res["sums"][seat]
            a["wins"] += res["ranks"][seat] == 1
            a["places"] += res["ranks"][seat]
            if m.faults:
                a["timeouts"] += m.faults[seat].timeouts
                a["illegal"] += m.faults[seat].illegal
                a["disconnects"] += m.faults[seat].disconnects
    order = sorted(acc, key=lambda b: (-acc[b]["stars"], acc[b]["sum"], b))
    rows = []
    for i, bot in enumerate(order):
        a = acc[bot]
        spm = a["stars"] / a["matches"]
        rows.append(StandingRow(i + 1, bot, a["matches"], a["stars"], a["sum"], a["wins"],
                                a["places"] / a["matches"], 25.0 + spm, 8.0 / a["matches"],
                                25.0 + spm - 24.0 / a["matches"], spm, max(0.0, spm - 0.5),
                                spm + 0.5, a["timeouts"], a["illegal"], a["disconnects"], None))
    return rows


def rating_history(matches: Iterable[MatchRecord], bot: str) -> list[tuple]:
    out, n, stars = [], 0, 0
    for m in matches:
        if bot in m.players:
            n += 1
            stars += (m.result or {"stars": [0] * 5})["stars"][m.players.index(bot)]
            out.append((m.id, m.finished_at, 25.0 + stars / n, 8.0 / n))
    return out
