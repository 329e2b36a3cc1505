"""Standings: who leads, by how much, and how sure we are (pure functions).

Each game describes how its results rank (``GameSpec.extra["standings"]``,
read by arena.tournament.ranking); the same code ranks every game. Only
``finished`` matches count, and only matches of one game: a ladder is per
game (``game=``), and matches of several games are refused.

Per bot: matches; the sum over its matches of each ranking key of the game
(Muushig: stars, then final scores; thirteen: points), ranked key by key in
the game's order, equal keys sharing a place (1, 1, 3); match wins (place
1, shared included), average place; a Plackett-Luce rating (openskill) from
the places, updated match by match in the order they finished; a 95%
percentile-bootstrap interval on the primary figure per match; fault counts
and the median decision latency; and for each row whether it is really
ahead of the next one on the primary figure (``vs_next``,
arena/tournament/separation.py).

Every row carries the primary figure under game-neutral names (``points``,
``points_per_match``, ``points_ci_low/high``, ``figures`` with the sum of
every ranking key, ``game``). A game's descriptor may name older row fields
that carry the same sums too (Muushig: ``stars``, ``score_sum``,
``stars_per_match``, ``stars_ci_low/high``); in rows of other games they
are None.

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
from arena.tournament.errors import TournamentError
from arena.tournament.plan import house_strategy
from arena.tournament.ranking import RankingSpec, RankingSpecError, ranking_for
from arena.tournament.schedule import HOUSE_PREFIX
from arena.tournament.separation import neighbour_separations


class MixedGamesError(TournamentError, ValueError):
    """Standings were asked over matches of more than one game."""


@dataclass(frozen=True, kw_only=True)
class StandingRow:
    rank: int
    bot: str
    matches: int
    # Filled only for games whose descriptor names them (Muushig), else None.
    stars: int | None = None
    score_sum: int | None = None
    wins: int
    avg_place: float
    rating_mu: float
    rating_sigma: float
    rating: float  # openskill ordinal, mu - 3 sigma
    stars_per_match: float | None = None
    stars_ci_low: float | None = None
    stars_ci_high: float | None = None
    timeouts: int
    illegal: int
    disconnects: int
    median_latency_ms: float | None
    # The game's primary figure, whatever the game (stars, points...).
    game: str | None = None
    points: int | float = 0
    points_per_match: float = 0.0
    points_ci_low: float = 0.0
    points_ci_high: float = 0.0
    # Sum over the bot's matches of every ranking key of the game, by result key.
    figures: dict[str, int | float] = field(default_factory=dict)
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


# Row fields a game's descriptor may ask to be filled (see RankingSpec.row_fields).
OPTIONAL_FIELDS = ("stars", "score_sum", "stars_per_match", "stars_ci_low", "stars_ci_high")


@dataclass
class _Tally:
    matches: int = 0
    sums: dict[str, int | float] = field(default_factory=dict)
    wins: int = 0
    places: int = 0
    primary_each: list[int | float] = field(default_factory=list)
    timeouts: int = 0
    illegal: int = 0
    disconnects: int = 0
    latencies: list[float] = field(default_factory=list)


def counted(matches: Iterable[MatchRecord]) -> list[MatchRecord]:
    """The finished matches with a result, in the order they finished."""
    done = [m for m in matches if m.status == MatchStatus.FINISHED and m.result is not None]
    return sorted(done, key=lambda m: (m.finished_at or 0.0, m.started_at, m.id))


def entrant_of(player: str) -> str:
    """The entrant a seat name belongs to: ``house-heuristic-3`` ->
    ``house-heuristic``; every other name is its own entrant. House bots fill
    seats under numbered names so that a match never names one bot twice, but
    they are one player per strategy: every table (the terminal's, the
    export's, the web's) counts them as one, once per seat held."""
    strategy = house_strategy(player)
    return player if strategy is None else f"{HOUSE_PREFIX}{strategy}"


def as_entrants(match: MatchRecord) -> MatchRecord:
    """The match with its seats named by entrant (unchanged if no house seat)."""
    players = [entrant_of(p) for p in match.players]
    return match if players == list(match.players) else replace(match, players=players)


def games_of(matches: Iterable[MatchRecord]) -> list[str]:
    """The games of the finished matches, sorted."""
    return sorted({m.game for m in counted(matches)})


def _faults(value: SeatFaults | dict[str, Any] | None) -> SeatFaults:
    if value is None:
        return SeatFaults()
    return value if isinstance(value, SeatFaults) else SeatFaults(**value)


def _rate(model: PlackettLuce, ratings: dict[str, Any], match: MatchRecord) -> None:
    """Update ``ratings`` with one match's places (ties allowed)."""
    assert match.result is not None, "only finished matches are rated"
    players, ranks = match.players, match.result[ranking_for(match.game).places]
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


def seat_figures(match: MatchRecord, spec: RankingSpec) -> dict[str, list[int | float]]:
    """Per ranking key, one number per seat (a result without the key: zeros)."""
    assert match.result is not None
    n = len(match.players)
    out = {}
    for k in spec.keys:
        values = match.result.get(k.key) or [0] * n
        if len(values) != n:
            raise RankingSpecError(f"match {match.id}: result[{k.key!r}] has {len(values)} "
                                   f"entries for {n} seats")
        out[k.key] = list(values)
    return out


def bootstrap_interval(values: list[int] | list[float], *, samples: int, seed: int | str,
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
                      house: Iterable[str] = (), game: str | None = None) -> list[StandingRow]:
    """Standings over ``matches`` (see module doc).

    ``game``: count only that game's matches (a ladder per game); without it
    the finished matches must all be of one game (else MixedGamesError).
    House bots (names starting ``house-``, or listed in ``house``) are rated
    with everyone else but left out of the rows when ``include_house`` is
    false; ranks are then numbered among the remaining bots.
    """
    finished = [as_entrants(m) for m in counted(matches)]
    if game is not None:
        finished = [m for m in finished if m.game == game]
    games = sorted({m.game for m in finished})
    if len(games) > 1:
        raise MixedGamesError(f"these matches are of several games ({', '.join(games)}); "
                              "standings rank one game at a time: pass game=NAME "
                              "(or use standings_by_game)")
    if not finished:
        return []
    spec = ranking_for(games[0])
    _check_row_fields(spec)
    model = PlackettLuce()
    ratings: dict[str, Any] = {}
    tallies: dict[str, _Tally] = {}
    primary = spec.primary.key
    for match in finished:
        result = match.result
        assert result is not None
        n = len(match.players)
        figures = seat_figures(match, spec)
        ranks = result[spec.places]
        faults: list[SeatFaults | dict[str, Any] | None] = [None] * n
        if match.faults:
            faults = list(match.faults)
        latency = match.latency_ms or [[] for _ in range(n)]
        for seat, bot in enumerate(match.players):
            t = tallies.setdefault(bot, _Tally(sums={k.key: 0 for k in spec.keys}))
            t.matches += 1
            for key, values in figures.items():
                t.sums[key] += values[seat]
            t.wins += ranks[seat] == 1
            t.places += ranks[seat]
            t.primary_each.append(figures[primary][seat])
            f = _faults(faults[seat])
            t.timeouts += f.timeouts
            t.illegal += f.illegal
            t.disconnects += f.disconnects
            t.latencies.extend(latency[seat])
        _rate(model, ratings, match)

    house_set = set(house)
    keep = [bot for bot in tallies
            if include_house or not (bot.startswith(HOUSE_PREFIX) or bot in house_set)]
    keep.sort(key=lambda b: (spec.sort_key(tallies[b].sums), b))
    rows: list[StandingRow] = []
    previous: tuple[float, ...] | None = None
    for i, bot in enumerate(keep):
        t = tallies[bot]
        order = spec.sort_key(t.sums)
        rank = rows[-1].rank if rows and order == previous else i + 1
        previous = order
        r = ratings[bot]
        low, high = bootstrap_interval(t.primary_each, samples=bootstrap_samples,
                                       seed=f"{seed}:{bot}")
        per_match = t.sums[primary] / t.matches
        named: dict[str, Any] = {k.field: t.sums[k.key] for k in spec.keys if k.field}
        if spec.per_match_prefix is not None:
            p = spec.per_match_prefix
            named.update({f"{p}_per_match": per_match, f"{p}_ci_low": low,
                          f"{p}_ci_high": high})
        rows.append(StandingRow(
            rank=rank, bot=bot, matches=t.matches,
            wins=t.wins, avg_place=t.places / t.matches, rating_mu=r.mu,
            rating_sigma=r.sigma, rating=r.ordinal(),
            timeouts=t.timeouts, illegal=t.illegal, disconnects=t.disconnects,
            median_latency_ms=statistics.median(t.latencies) if t.latencies else None,
            game=spec.game, points=t.sums[primary], points_per_match=per_match,
            points_ci_low=low, points_ci_high=high, figures=dict(t.sums), **named))
    separations = neighbour_separations([r.bot for r in rows], finished)
    return [replace(row, vs_next=sep.to_wire()) if sep is not None else row
            for row, sep in zip(rows, separations)]


def standings_by_game(matches: Iterable[MatchRecord], **options: Any) -> dict[str, list[StandingRow]]:
    """One ladder per game of the finished ``matches`` (options as
    :func:`compute_standings`)."""
    matches = counted(matches)
    return {g: compute_standings(matches, game=g, **options) for g in games_of(matches)}


def fold_ratings(matches: Iterable[MatchRecord],
                 ratings: dict[str, dict[str, Any]] | None = None) -> dict[str, dict[str, Any]]:
    """Per game, each entrant's rating after the finished ``matches`` (taken
    in finishing order), continuing from ``ratings``: the same updates as
    :func:`compute_standings`, so folding matches in batches ends where one
    pass over them all does. ``ratings`` is not changed."""
    model = PlackettLuce()
    out = {game: dict(by_bot) for game, by_bot in (ratings or {}).items()}
    for match in counted(matches):
        _rate(model, out.setdefault(match.game, {}), as_entrants(match))
    return out


def _check_row_fields(spec: RankingSpec) -> None:
    for name in spec.row_fields():
        if name not in OPTIONAL_FIELDS:
            raise RankingSpecError(f"game {spec.game!r} names standings field {name!r}; "
                                   f"it may name only {', '.join(OPTIONAL_FIELDS)}")


def rating_history(matches: Iterable[MatchRecord], bot: str, *,
                   game: str | None = None) -> list[tuple[str, float | None, float, float]]:
    """``(match_id, finished_at, mu, sigma)`` after each of ``bot``'s matches
    (of ``game``; without it the matches must all be of one game)."""
    model = PlackettLuce()
    ratings: dict[str, Any] = {}
    history = []
    finished = [as_entrants(m) for m in counted(matches) if game is None or m.game == game]
    games = sorted({m.game for m in finished})
    if len(games) > 1:
        raise MixedGamesError(f"these matches are of several games ({', '.join(games)}); "
                              "a rating is per game: pass game=NAME")
    for match in finished:
        _rate(model, ratings, match)
        if bot in match.players:
            r = ratings[bot]
            history.append((match.id, match.finished_at, r.mu, r.sigma))
    return history
