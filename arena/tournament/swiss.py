"""Swiss rounds: each round seats entrants of similar standing together.

A Swiss tournament (``[schedule] kind = "swiss"``, ``rounds = N``) is
created with its first round only; each later round is paired from the
standings after the round before it and appended to the stored schedule
(``Store.extend_schedule``), so a resumed or shared tournament pairs the
same round from the same finished matches. Everything here is pure: the
pairing is a function of the standings, the tables already played, the
seed and the round number, and ``arena verify`` pairs every round again to
check the stored one.

**The pairing rule** (docs/tournaments.md states it for organisers):

1. Order the entrants by their standing after the previous round (the
   game's ranking keys summed over their matches, as in the standings);
   entrants level on every key are ordered by a draw seeded by the
   tournament's seed and the round number. In round 1 everyone is level,
   so the order is the draw.
2. A round has ``ceil(N / seats)`` tables; house bots fill the empty seats,
   all at the last table (the lowest standings).
3. Tables are filled from the top: the best-placed entrant not yet seated
   opens a table; every further seat goes to the entrant, among the next
   ``WINDOW_TABLES`` tables' worth of unseated entrants in standing order,
   who has shared the fewest earlier tables with those already at it (ties:
   the better standing). A repeated table-mate is taken only when every
   entrant in the window is one. Then, while swapping two entrants of
   neighbouring tables lowers the round's repeated table-mates, the swap
   that lowers them most is made (ties: the earliest pair of tables).
4. Every table of a round deals the same decks (one deck set per round);
   in duplicate mode each table is played once per seat, the players
   rotated one seat each time, so the luck of the cards cancels within the
   table and is the same for every table of the round.
"""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from arena.storage.base import ScheduledMatch
from arena.tournament.ranking import ranking_for
from arena.tournament.schedule import HOUSE_PREFIX, ScheduleError, Table
from arena.tournament.standings import StandingRow

# How far down the standings a seat may look for a fresh table-mate, in
# tables: one more table's worth than the seats left, so the top table can
# avoid a repeat without reaching into the bottom half of the field.
WINDOW_TABLES = 2

# How far apart (in tables) two entrants may be swapped to avoid a repeat.
SWAP_TABLES = 1

Pair = frozenset[str]


@dataclass(frozen=True)
class SwissRound:
    number: int  # 1-based
    tables: list[tuple[str, ...]]  # players per table, best-placed first


def round_seed(seed: int, number: int) -> str:
    """The deck label every table of round ``number`` plays."""
    return f"{seed}:round{number}"


def standing_order(entrants: Sequence[str], figures: Mapping[str, Mapping[str, float]], *,
                   game: str, seed: int, number: int) -> list[str]:
    """Rule 1: entrants best first by their summed ranking ``figures``
    (an entrant without any has zeros); level ones in a seeded draw."""
    spec = ranking_for(game)
    empty = {k.key: 0 for k in spec.keys}
    rng = random.Random(f"swiss:{seed}:{number}")
    draw = {name: rng.random() for name in sorted(entrants)}
    return sorted(entrants, key=lambda name: (spec.sort_key(figures.get(name, empty)),
                                              draw[name]))


def met_counts(tables: Iterable[Sequence[str]]) -> Counter[Pair]:
    """How often each pair of players shared a table (one count per table,
    however many rotations it had)."""
    met: Counter[Pair] = Counter()
    for players in tables:
        for a, b in itertools.combinations(sorted(set(players)), 2):
            met[frozenset((a, b))] += 1
    return met


def pair_round(order: Sequence[str], *, seats: int, met: Mapping[Pair, int],
               house: Sequence[str] = ()) -> list[tuple[str, ...]]:
    """Rules 2 and 3: the tables of a round for entrants in standing ``order``."""
    if seats < 2:
        raise ScheduleError(f"a table needs at least 2 seats, not {seats}")
    if not order:
        raise ScheduleError("a Swiss round needs at least one entrant")
    n_tables = math.ceil(len(order) / seats)
    empty = n_tables * seats - len(order)
    if len(house) < empty:
        raise ScheduleError(f"{len(order)} entrants at {n_tables} tables of {seats} leave "
                            f"{empty} empty seats, but only {len(house)} house bots are named")
    left = list(order)
    tables: list[list[str]] = []
    for t in range(n_tables):
        size = seats - (empty if t == n_tables - 1 else 0)
        table = [left.pop(0)]
        while len(table) < size:
            window = left[:WINDOW_TABLES * seats]
            pick = min(range(len(window)), key=lambda i: (
                sum(met.get(frozenset((window[i], p)), 0) for p in table), i))
            table.append(left.pop(pick))
        tables.append(table)
    _swap_repeats(tables, met)
    return [tuple(t + (list(house[:empty]) if i == n_tables - 1 else []))
            for i, t in enumerate(tables)]


def repeats(tables: Iterable[Sequence[str]], met: Mapping[Pair, int]) -> int:
    """Earlier meetings of the pairs seated together (0: all fresh)."""
    return sum(met.get(frozenset((a, b)), 0)
               for t in tables for a, b in itertools.combinations(t, 2))


def _swap_repeats(tables: list[list[str]], met: Mapping[Pair, int]) -> None:
    """Rule 3, second part: the greedy top-down fill leaves the repeats to
    the bottom tables; while swapping two entrants of neighbouring tables
    lowers the round's repeats, make the swap that lowers them most (ties:
    the earliest, so the standing order moves as little as it can)."""
    def cost(t: list[str]) -> int:
        return repeats([t], met)

    while True:
        best: tuple[int, int, int, int, int] | None = None  # (gain, t, u, i, j) of a swap
        for t, u in itertools.combinations(range(len(tables)), 2):
            if u - t > SWAP_TABLES:
                continue
            upper, lower = tables[t], tables[u]
            now = cost(upper) + cost(lower)
            if now == 0:
                continue
            for i, j in itertools.product(range(len(upper)), range(len(lower))):
                upper[i], lower[j] = lower[j], upper[i]
                gain = now - cost(upper) - cost(lower)
                upper[i], lower[j] = lower[j], upper[i]
                if gain > 0 and (best is None or gain > best[0]):
                    best = (gain, t, u, i, j)
        if best is None:
            return
        _, t, u, i, j = best
        tables[t][i], tables[u][j] = tables[u][j], tables[t][i]


def swiss_round(entrants: Sequence[str], rows: Sequence[StandingRow],
                played: Iterable[Sequence[str]], *, game: str, seats: int, seed: int,
                number: int, house: Sequence[str] = ()) -> SwissRound:
    """Round ``number`` after the standings ``rows`` and the tables ``played``."""
    order = standing_order(entrants, {row.bot: row.figures for row in rows}, game=game,
                           seed=seed, number=number)
    met = met_counts([p for p in players if not p.startswith(HOUSE_PREFIX)]
                     for players in played)
    return SwissRound(number, pair_round(order, seats=seats, met=met, house=house))


def round_tables(swiss: SwissRound, *, seed: int, first_slot: int, first_table: int,
                 duplicate: bool) -> list[Table]:
    """Rule 4: the round's matches, every table on the round's decks."""
    out: list[Table] = []
    label = round_seed(seed, swiss.number)
    for i, players in enumerate(swiss.tables):
        seats = len(players)
        # Without duplicate, the seat order turns with the round so nobody
        # keeps the first seat because they lead.
        turns = range(seats) if duplicate else [(swiss.number - 1) % seats]
        for r in turns:
            out.append(Table(slot=first_slot + len(out), table=first_table + i,
                             rotation=r if duplicate else 0,
                             players=tuple(players[(s + r) % seats] for s in range(seats)),
                             seed=label))
    return out


def rounds_of(schedule: Sequence[ScheduledMatch]) -> dict[int, list[ScheduledMatch]]:
    """The stored schedule by round number."""
    rounds: dict[int, list[ScheduledMatch]] = {}
    for slot in schedule:
        rounds.setdefault(int(slot.extra.get("round", 1)), []).append(slot)
    return dict(sorted(rounds.items()))


def tables_of(slots: Sequence[ScheduledMatch]) -> list[list[str]]:
    """One player list per table of ``slots`` (rotations taken once)."""
    by_table: dict[object, list[str]] = {}
    for slot in slots:
        by_table.setdefault(slot.extra.get("table", slot.slot), list(slot.players))
    return list(by_table.values())


def swiss_house(strategy: str, entrants: int, seats: int) -> list[str]:
    """The house bots that fill a Swiss round's empty seats (rule 2)."""
    from arena.tournament.schedule import house_bot_names

    return house_bot_names(strategy, math.ceil(entrants / seats) * seats - entrants)


def round_slots(tournament_id: str, tables: Sequence[Table], number: int) -> list[ScheduledMatch]:
    """Stored rows of a round; ``extra.round`` names it."""
    return [ScheduledMatch(tournament_id=tournament_id, slot=t.slot, players=list(t.players),
                           seed=t.seed, extra={"table": t.table, "rotation": t.rotation,
                                               "round": number})
            for t in tables]


def next_round(tournament_id: str, entrants: Sequence[str], schedule: Sequence[ScheduledMatch],
               rows: Sequence[StandingRow], *, game: str, seats: int, seed: int,
               rounds: int, duplicate: bool, house: Sequence[str]) -> list[ScheduledMatch] | None:
    """The slots of the round after ``schedule``'s last one, paired from
    ``rows`` (the standings over its matches); None while a slot of the
    schedule is unplayed or when every round is paired."""
    if any(slot.match_id is None for slot in schedule):
        return None
    by_round = rounds_of(schedule)
    number = max(by_round, default=0) + 1
    if number > rounds:
        return None
    played = [players for slots in by_round.values() for players in tables_of(slots)]
    swiss = swiss_round(entrants, rows, played, game=game, seats=seats, seed=seed,
                        number=number, house=house)
    first_table = 1 + max((int(s.extra.get("table", -1)) for s in schedule), default=-1)
    tables = round_tables(swiss, seed=seed, first_slot=len(schedule), first_table=first_table,
                          duplicate=duplicate)
    return round_slots(tournament_id, tables, number)


def swiss_progress(schedule: Sequence[ScheduledMatch], rounds: int) -> dict[str, int]:
    """Matches played of the whole tournament (every round is the size of
    the first, though only the paired ones are stored yet), and the round
    being played (the last paired)."""
    by_round = rounds_of(schedule)
    per_round = len(next(iter(by_round.values()))) if by_round else 0
    return {"done": sum(1 for s in schedule if s.match_id is not None),
            "total": per_round * rounds, "round": max(by_round, default=0), "rounds": rounds}


def schedule_progress(schedule: Sequence[ScheduledMatch],
                      config: Mapping[str, object] | None = None) -> dict[str, int]:
    """Matches played of all; a Swiss tournament's rounds are paired one at
    a time, so its total counts the rounds not yet stored, and it names the
    round being played (``config``: the stored tournament config)."""
    rules = (config or {}).get("schedule")
    if isinstance(rules, dict) and rules.get("kind") == "swiss" and rules.get("rounds"):
        return swiss_progress(schedule, int(rules["rounds"]))
    return {"done": sum(1 for s in schedule if s.match_id is not None), "total": len(schedule)}
