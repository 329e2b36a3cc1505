"""Who plays whom, in which seat, with which decks (pure and deterministic).

* **Round robin**: every combination of ``seats`` entrants meets exactly once.
* **Balanced** (when there are too many combinations): a chosen number of
  tables in which every entrant plays equally often (±1) and every pair of
  entrants shares a table equally often (±1), found by a greedy pass and a
  seeded local search.
* **Seats**: in both kinds each entrant holds every seat equally often (±1),
  by an *equitable edge colouring* of the tables × entrants graph (de Werra):
  split each entrant into groups of at most ``seats`` appearances, colour the
  edges of that bipartite graph properly with ``seats`` colours (König), and
  read colours as seats -- each full group then holds every seat once.
* **Duplicate**: every table is played ``seats`` times with the players
  rotated one seat each time and the SAME deck seed, so every entrant holds
  every seat's cards once and the luck of the deal cancels out.

With fewer entrants than seats, house bots fill the empty seats.
"""

from __future__ import annotations

import enum
import itertools
import math
import random
from collections import Counter
from dataclasses import dataclass
from typing import Sequence

import structlog

from arena.tournament.errors import TournamentError

log = structlog.get_logger(__name__)

HOUSE_PREFIX = "house-"
MAX_DISTINCT_TABLES = 100_000
_SEARCH_STEPS = 300_000  # local-search moves per attempt (balanced schedules)
_ATTEMPTS = 3
_TEMPERATURE = 0.3  # rare uphill moves get the search out of local minima


class ScheduleError(TournamentError, ValueError):
    """The schedule cannot be built from these entrants and options."""


class ScheduleKind(str, enum.Enum):
    AUTO = "auto"
    ROUND_ROBIN = "round_robin"
    BALANCED = "balanced"
    # Rounds paired from the standings (arena/tournament/swiss.py): the
    # schedule grows one round at a time, so make_schedule never builds it.
    SWISS = "swiss"
    # One challenger against a field, a deck set at a time until the
    # stopping rule decides (arena/tournament/gauntlet_play.py): grown too.
    GAUNTLET = "gauntlet"


@dataclass(frozen=True)
class Table:
    """One match to play: the schedule's ``slot``-th entry."""

    slot: int  # position in the schedule, 0-based
    table: int  # the distinct table (deal) this match plays
    rotation: int  # 0 .. seats-1 in duplicate mode (seat k got players rotated by k), else 0
    players: tuple[str, ...]  # bot name per seat
    seed: str  # deck seed; identical for every rotation of a table


def house_bot_names(strategy: str, count: int) -> list[str]:
    """Names for house bots filling empty seats: ``house-<strategy>-1`` ..."""
    return [f"{HOUSE_PREFIX}{strategy}-{i}" for i in range(1, count + 1)]


def deck_seed(seed: int, table: int) -> str:
    """The deck seed of a distinct table (``random.Random`` accepts it)."""
    return f"{seed}:{table}"


def resolve_kind(n_entrants: int, *, seats: int, kind: ScheduleKind | str,
                 max_tables: int) -> ScheduleKind:
    """``auto`` means round robin when C(N, seats) <= max_tables."""
    kind = ScheduleKind(kind)
    if kind is ScheduleKind.AUTO:
        fits = math.comb(max(n_entrants, seats), seats) <= max_tables
        return ScheduleKind.ROUND_ROBIN if fits else ScheduleKind.BALANCED
    return kind


def default_table_count(n_entrants: int, seats: int) -> int:
    """Distinct tables of a balanced schedule when the file does not say.

    Every entrant plays ``r`` tables, ``r`` >= seats and a whole number of
    tables in all (N·r divisible by seats). ``r`` leaves a quarter more
    opponent slots than opponents: every pair can then meet once or twice
    (spread <= 1) with room for the search, whereas an exact covering (say
    20 entrants in 20 tables) often does not exist at all.
    """
    r = max(seats, math.ceil(1.25 * (n_entrants - 1) / (seats - 1)))
    while (n_entrants * r) % seats:
        r += 1
    return n_entrants * r // seats


def make_schedule(entrants: Sequence[str], *, seats: int = 5,
                  kind: ScheduleKind | str = ScheduleKind.AUTO, max_tables: int = 252,
                  tables: int | None = None, duplicate: bool = True, seed: int = 0,
                  house_names: Sequence[str] | None = None) -> list[Table]:
    """The whole schedule, in playing order (see module doc).

    ``house_names`` fill the seats when there are fewer entrants than seats
    (default ``house-heuristic-1`` ...); ``tables`` is the number of distinct
    tables of a balanced schedule (before duplication).
    """
    names = _players(entrants, seats, house_names)
    n = len(names)
    rng = random.Random(f"schedule:{seed}")
    chosen = resolve_kind(n, seats=seats, kind=kind, max_tables=max_tables)
    if chosen is ScheduleKind.SWISS:
        raise ScheduleError("a Swiss schedule is paired round by round from the standings "
                            "(arena.tournament.swiss), not built whole")
    if chosen is ScheduleKind.GAUNTLET:
        raise ScheduleError("a gauntlet is seated deck set by deck set until its stopping "
                            "rule decides (arena.tournament.gauntlet_play), not built whole")
    if chosen is ScheduleKind.ROUND_ROBIN:
        count = math.comb(n, seats)
        if count > MAX_DISTINCT_TABLES:
            raise ScheduleError(f"a round robin of {n} entrants is {count} tables, more than "
                                f"{MAX_DISTINCT_TABLES}; use a balanced schedule")
        groups = [list(c) for c in itertools.combinations(range(n), seats)]
        rng.shuffle(groups)  # a tournament stopped early is not biased to entrant 0
    else:
        count = default_table_count(n, seats) if tables is None else tables
        if not 1 <= count <= MAX_DISTINCT_TABLES:
            raise ScheduleError(f"tables must be between 1 and {MAX_DISTINCT_TABLES}, "
                                f"not {count}")
        groups = _balanced_groups(n, seats, count, rng)
    seating = _assign_seats(groups, n, seats)
    schedule: list[Table] = []
    for t, seated in enumerate(seating):
        rotations = range(seats) if duplicate else range(1)
        for r in rotations:
            players = tuple(names[seated[(s + r) % seats]] for s in range(seats))
            schedule.append(Table(slot=len(schedule), table=t, rotation=r, players=players,
                                  seed=deck_seed(seed, t)))
    return schedule


def _players(entrants: Sequence[str], seats: int,
             house: Sequence[str] | None) -> list[str]:
    if seats < 2:
        raise ScheduleError(f"a table needs at least 2 seats, not {seats}")
    names = list(entrants)
    if not names:
        raise ScheduleError("a tournament needs at least one entrant")
    dupes = sorted(name for name, k in Counter(names).items() if k > 1)
    if dupes:
        raise ScheduleError(f"entrant names must be unique: {', '.join(dupes)}")
    missing = seats - len(names)
    if missing > 0:
        fill = list(house) if house is not None else house_bot_names("heuristic", missing)
        if len(fill) < missing:
            raise ScheduleError(f"{len(names)} entrants need {missing} house bots, "
                                f"only {len(fill)} named")
        clash = set(fill[:missing]) & set(names)
        if clash:
            raise ScheduleError(f"house bot names clash with entrants: {sorted(clash)}")
        names += fill[:missing]
    return names


# -- balanced tables ----------------------------------------------------------

def _pair_counts(groups: list[list[int]], n: int) -> list[list[int]]:
    pairs = [[0] * n for _ in range(n)]
    for g in groups:
        for a, b in itertools.combinations(g, 2):
            pairs[a][b] += 1
            pairs[b][a] += 1
    return pairs


def pair_spread(groups: Sequence[Sequence[int]], n: int) -> int:
    """max - min of how often two entrants share a table, over all pairs."""
    pairs = _pair_counts([list(g) for g in groups], n)
    values = [pairs[a][b] for a, b in itertools.combinations(range(n), 2)]
    return max(values) - min(values) if values else 0


def _greedy(n: int, seats: int, count: int, rng: random.Random) -> list[list[int]]:
    played = [0] * n
    pairs = [[0] * n for _ in range(n)]
    groups = []
    for _ in range(count):
        group: list[int] = []
        for _ in range(seats):
            free = [b for b in range(n) if b not in group]
            least = min(played[b] for b in free)
            # Only the least-played may join, which keeps appearances within ±1.
            candidates = [b for b in free if played[b] == least]
            group.append(min(candidates, key=lambda b: (
                sum(2 * pairs[b][g] + 1 for g in group), rng.random())))
        for a, b in itertools.combinations(group, 2):
            pairs[a][b] += 1
            pairs[b][a] += 1
        for b in group:
            played[b] += 1
        groups.append(group)
    return groups


def _improve(groups: list[list[int]], n: int, rng: random.Random) -> None:
    """Swap entrants between tables to flatten pair counts, in place.

    Minimises the sum of squared pair counts (its optimum has spread <= 1),
    keeping every entrant's number of tables. Half the moves are aimed at a
    pair that meets too often (move one of them off a shared table) or too
    rarely (bring one to a table of the other), half are random; neutral
    moves are always taken, so the search walks across plateaus, and a worse
    move now and then (annealing at a fixed low temperature) lets it escape
    local minima.
    """
    pairs = _pair_counts(groups, n)
    tables_of: list[set[int]] = [set() for _ in range(n)]
    for t, g in enumerate(groups):
        for p in g:
            tables_of[p].add(t)
    all_pairs = list(itertools.combinations(range(n), 2))
    total = sum(pairs[a][b] for a, b in all_pairs)
    low = total // len(all_pairs) if all_pairs else 0  # the target is {low, low + 1}

    def is_bad(a: int, b: int) -> bool:
        return not low <= pairs[a][b] <= low + 1

    n_tables = len(groups)
    bad: list[tuple[int, int]] = []
    n_bad = sum(1 for a, b in all_pairs if is_bad(a, b))
    for step in range(_SEARCH_STEPS):
        if n_bad == 0:
            return
        if step % 64 == 0:
            bad = [(a, b) for a, b in all_pairs if is_bad(a, b)]
        if rng.random() < 0.5:
            a, b = bad[rng.randrange(len(bad))]
            if not is_bad(a, b):
                continue
            if pairs[a][b] > low + 1:  # too often: move a (or b) off a shared table
                if rng.random() < 0.5:
                    a, b = b, a
                ta, x = rng.choice(sorted(tables_of[a] & tables_of[b])), a
                tb = rng.randrange(n_tables)
                y = groups[tb][rng.randrange(len(groups[tb]))]
            else:  # too rarely: bring b to a table of a, swapping someone out
                ta, tb = rng.choice(sorted(tables_of[a])), rng.choice(sorted(tables_of[b]))
                x, y = groups[ta][rng.randrange(len(groups[ta]))], b
                if x == a:
                    continue
        else:
            ta, tb = rng.randrange(n_tables), rng.randrange(n_tables)
            x = groups[ta][rng.randrange(len(groups[ta]))]
            y = groups[tb][rng.randrange(len(groups[tb]))]
        if ta == tb or x in groups[tb] or y in groups[ta]:
            continue
        delta: Counter[tuple[int, int]] = Counter()
        for z in groups[ta]:
            if z != x:
                delta[(min(x, z), max(x, z))] -= 1
                delta[(min(y, z), max(y, z))] += 1
        for w in groups[tb]:
            if w != y:
                delta[(min(y, w), max(y, w))] -= 1
                delta[(min(x, w), max(x, w))] += 1
        cost = sum(2 * pairs[p][q] * d + d * d for (p, q), d in delta.items())
        if cost > 0 and rng.random() >= math.exp(-cost / _TEMPERATURE):
            continue
        for (p, q), d in delta.items():
            n_bad -= is_bad(p, q)
            pairs[p][q] += d
            pairs[q][p] += d
            n_bad += is_bad(p, q)
        ia, ib = groups[ta].index(x), groups[tb].index(y)
        groups[ta][ia], groups[tb][ib] = y, x
        tables_of[x].remove(ta)
        tables_of[x].add(tb)
        tables_of[y].remove(tb)
        tables_of[y].add(ta)


def _spread_one_possible(n: int, seats: int, count: int) -> bool:
    """A necessary condition for pair spread <= 1: every entrant's opponent
    slots fit between low and low + 1 meetings with each of the others."""
    if n <= seats:
        return True
    low = count * math.comb(seats, 2) // math.comb(n, 2)
    played = {count * seats // n, -(-count * seats // n)}
    return all(low * (n - 1) <= (seats - 1) * r <= (low + 1) * (n - 1) for r in played)


def _balanced_groups(n: int, seats: int, count: int, rng: random.Random) -> list[list[int]]:
    best: list[list[int]] | None = None
    best_spread = math.inf
    possible = _spread_one_possible(n, seats, count)
    for _ in range(_ATTEMPTS if possible else 1):
        groups = _greedy(n, seats, count, rng)
        if possible:
            _improve(groups, n, rng)
        spread = pair_spread(groups, n)
        if spread < best_spread:
            best, best_spread = groups, spread
        if spread <= 1:
            break
    assert best is not None
    if best_spread > 1:
        log.warning("schedule.pairs_unbalanced", entrants=n, tables=count,
                    spread=best_spread, hint="choose another number of tables")
    return best


# -- seats --------------------------------------------------------------------

def _assign_seats(groups: list[list[int]], n: int, seats: int) -> list[list[int]]:
    """Per group, the player index per seat, every player's seats balanced ±1."""
    # Split each player into "vertices" of at most `seats` appearances each.
    seen = [0] * n
    edges: list[tuple[int, tuple[int, int]]] = []
    for t, group in enumerate(groups):
        for p in group:
            edges.append((t, (p, seen[p] // seats)))
            seen[p] += 1
    at_table: list[dict[int, tuple[int, int]]] = [{} for _ in groups]
    at_player: dict[tuple[int, int], dict[int, int]] = {}
    for t, v in edges:
        vt = at_table[t]
        vp = at_player.setdefault(v, {})
        a = next(c for c in range(seats) if c not in vt)
        b = next(c for c in range(seats) if c not in vp)
        if a in vp:
            if b not in vt:
                a = b
            else:
                _flip_path(v, a, b, at_table, at_player)
        vt[a] = v
        vp[a] = t
    return [[at_table[t][s][0] for s in range(seats)] for t in range(len(groups))]


def _flip_path(start: tuple[int, int], a: int, b: int,
               at_table: list[dict[int, tuple[int, int]]],
               at_player: dict[tuple[int, int], dict[int, int]]) -> None:
    """Swap colours a/b along the alternating path that leaves ``start`` by
    colour a (Kempe chain); afterwards a is free at ``start``."""
    path: list[tuple[int, tuple[int, int], int]] = []  # (table, player-vertex, colour)
    # The walk is at a player vertex or at a table vertex, alternately.
    player: tuple[int, int] | None = start
    table = -1
    colour = a
    while True:
        if player is not None:
            t = at_player[player].get(colour)
            if t is None:
                break
            path.append((t, player, colour))
            player, table = None, t
        else:
            pv = at_table[table].get(colour)
            if pv is None:
                break
            path.append((table, pv, colour))
            player = pv
        colour = b if colour == a else a
    for t, v, c in path:
        del at_table[t][c]
        del at_player[v][c]
    for t, v, c in path:
        other = b if c == a else a
        at_table[t][other] = v
        at_player[v][other] = t
