"""Standings: who leads, by how much, and how sure we are (pure functions).

Only ``finished`` matches count. Per bot: matches, stars, summed final
scores, ranking by stars (descending) then summed final scores (ascending) --
the match rule, summed over matches -- with equal keys sharing a place
(1, 1, 3); match wins (place 1, shared included), average place; a
Plackett-Luce rating (openskill) updated match by match in the order they
finished; a 95% percentile-bootstrap interval on stars per match; fault
counts and the median decision latency; and for each row whether it is
really ahead of the next one (``vs_next``, arena/tournament/separation.py).

A bot seated twice in one match counts once per seat; for its rating, the
seats are rated as separate players and the bot keeps the mean of their
updates.
"""

from __future__ import annotations

import random
import statistics
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, Iterable

from openskill.models import PlackettLuce

from arena.storage.base import MatchRecord, MatchStatus, SeatFaults
from arena.tournament.schedule import HOUSE_PREFIX
from arena.tournament.separation import neighbour_separations


@dataclass(frozen=True)
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
    rating: float  # openskill ordinal, mu - 3 sigma
    stars_per_match: float
    stars_ci_low: float
    stars_ci_high: float
    timeouts: int
    illegal: int
    disconnects: int
    median_latency_ms: float | None
    # Compared with the next row (arena.tournament.separation); None on the last.
    vs_next: dict[str, Any] | None = field(default=None, compare=False)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        if data["vs_next"] is None:
            del data["vs_next"]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StandingRow:
        return cls(**{f.name: data[f.name] for f in fields(cls) if f.name in data})


@dataclass
class _Tally:
    matches: int = 0
    stars: int = 0
    score_sum: int = 0
    wins: int = 0
    places: int = 0
    stars_each: list[int] = field(default_factory=list)
    timeouts: int = 0
    illegal: int = 0
    disconnects: int = 0
    latencies: list[float] = field(default_factory=list)


def counted(matches: Iterable[MatchRecord]) -> list[MatchRecord]:
    """The finished matches with a result, in the order they finished."""
    done = [m for m in matches if m.status == MatchStatus.FINISHED and m.result is not None]
    return sorted(done, key=lambda m: (m.finished_at or 0.0, m.started_at, m.id))


def _faults(value: SeatFaults | dict[str, Any] | None) -> SeatFaults:
    if value is None:
        return SeatFaults()
    return value if isinstance(value, SeatFaults) else SeatFaults(**value)


def _rate(model: PlackettLuce, ratings: dict[str, Any], match: MatchRecord) -> None:
    """Update ``ratings`` with one match's places (ties allowed)."""
    players, ranks = match.players, match.result["ranks"]
    teams = [[ratings.setdefault(bot, model.rating(name=bot))] for bot in players]
    new = model.rate(teams, ranks=list(ranks))
    by_bot: dict[str, list[Any]] = {}
    for bot, team in zip(players, new):
        by_bot.setdefault(bot, []).append(team[0])
    for bot, seats in by_bot.items():
        if len(seats) == 1:
            ratings[bot] = seats[0]
        else:
            ratings[bot] = model.rating(mu=statistics.fmean(r.mu for r in seats),
                                        sigma=statistics.fmean(r.sigma for r in seats),
                                        name=bot)


def bootstrap_interval(values: list[int] | list[float], *, samples: int, seed: object,
                       level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``values``."""
    if not values:
        raise ValueError("no values to bootstrap")
    if len(set(values)) == 1 or samples <= 0:
        m = statistics.fmean(values)
        return (m, m)
    rng = random.Random(seed)
    n = len(values)
    means = sorted(sum(rng.choices(values, k=n)) / n for _ in range(samples))
    tail = (1.0 - level) / 2
    low = means[int(tail * samples)]
    high = means[min(samples - 1, int((1.0 - tail) * samples))]
    return (low, high)


def compute_standings(matches: Iterable[MatchRecord], *, include_house: bool = True,
                      bootstrap_samples: int = 2000, seed: int = 0,
                      house: Iterable[str] = ()) -> list[StandingRow]:
    """Standings over ``matches`` (see module doc).

    House bots (names starting ``house-``, or listed in ``house``) are rated
    with everyone else but left out of the rows when ``include_house`` is
    false; ranks are then numbered among the remaining bots.
    """
    model = PlackettLuce()
    ratings: dict[str, Any] = {}
    tallies: dict[str, _Tally] = {}
    finished = counted(matches)
    for match in finished:
        result = match.result
        assert result is not None
        n = len(match.players)
        stars = result.get("stars") or [0] * n
        sums = result.get("sums") or [0] * n
        ranks = result["ranks"]
        faults = match.faults or [None] * n
        latency = match.latency_ms or [[] for _ in range(n)]
        for seat, bot in enumerate(match.players):
            t = tallies.setdefault(bot, _Tally())
            t.matches += 1
            t.stars += stars[seat]
            t.score_sum += sums[seat]
            t.wins += ranks[seat] == 1
            t.places += ranks[seat]
            t.stars_each.append(stars[seat])
            f = _faults(faults[seat])
            t.timeouts += f.timeouts
            t.illegal += f.illegal
            t.disconnects += f.disconnects
            t.latencies.extend(latency[seat])
        _rate(model, ratings, match)

    house_set = set(house)
    keep = [bot for bot in tallies
            if include_house or not (bot.startswith(HOUSE_PREFIX) or bot in house_set)]
    keep.sort(key=lambda b: (-tallies[b].stars, tallies[b].score_sum, b))
    rows: list[StandingRow] = []
    for i, bot in enumerate(keep):
        t = tallies[bot]
        if rows and (t.stars, t.score_sum) == (rows[-1].stars, rows[-1].score_sum):
            rank = rows[-1].rank
        else:
            rank = i + 1
        r = ratings[bot]
        low, high = bootstrap_interval(t.stars_each, samples=bootstrap_samples,
                                       seed=f"{seed}:{bot}")
        rows.append(StandingRow(
            rank=rank, bot=bot, matches=t.matches, stars=t.stars, score_sum=t.score_sum,
            wins=t.wins, avg_place=t.places / t.matches, rating_mu=r.mu,
            rating_sigma=r.sigma, rating=r.ordinal(),
            stars_per_match=t.stars / t.matches, stars_ci_low=low, stars_ci_high=high,
            timeouts=t.timeouts, illegal=t.illegal, disconnects=t.disconnects,
            median_latency_ms=statistics.median(t.latencies) if t.latencies else None))
    separations = neighbour_separations([r.bot for r in rows], finished)
    return [replace(row, vs_next=sep.to_wire()) if sep is not None else row
            for row, sep in zip(rows, separations)]


def rating_history(matches: Iterable[MatchRecord],
                   bot: str) -> list[tuple[str, float | None, float, float]]:
    """``(match_id, finished_at, mu, sigma)`` after each of ``bot``'s matches."""
    model = PlackettLuce()
    ratings: dict[str, Any] = {}
    history = []
    for match in counted(matches):
        _rate(model, ratings, match)
        if bot in match.players:
            r = ratings[bot]
            history.append((match.id, match.finished_at, r.mu, r.sigma))
    return history
