"""Swiss rounds against the store: pair the next round once the last one is
played, and append it to the tournament's schedule (once, whichever runner
or node gets there first). The pairing itself is arena/tournament/swiss.py."""

from __future__ import annotations

from arena.games import get_game
from arena.storage.base import MatchRecord, ScheduledMatch, Store
from arena.tournament.config import TournamentConfig, table_seats
from arena.tournament.schedule import ScheduleKind
from arena.tournament.standings import compute_standings
from arena.tournament.swiss import next_round, rounds_of, swiss_house


def is_swiss(config: TournamentConfig) -> bool:
    return config.schedule.kind is ScheduleKind.SWISS


def swiss_slots(config: TournamentConfig, tid: str, schedule: list[ScheduledMatch],
                matches: list[MatchRecord]) -> list[ScheduledMatch] | None:
    """The next round of ``config`` after ``schedule`` (whose played slots'
    matches are ``matches``); None when it is not due or all are paired."""
    assert config.schedule.rounds is not None, "a Swiss config has rounds"
    spec = get_game(config.game)
    seats = table_seats(config.game, config.rules)
    house = swiss_house(config.schedule.house_bot or spec.default_house_bot,
                        len(config.entrants), seats)
    # Only the ranking keys order the field: no bootstrap intervals needed.
    rows = compute_standings(matches, bootstrap_samples=0, game=config.game) if matches else []
    return next_round(tid, config.entrant_names, schedule, rows, game=config.game,
                      seats=seats, seed=config.seed, rounds=config.schedule.rounds,
                      duplicate=config.duplicate, house=house)


def first_round(config: TournamentConfig, tid: str) -> list[ScheduledMatch]:
    slots = swiss_slots(config, tid, [], [])
    assert slots is not None, "round 1 is always due"
    return slots


def played_matches(store: Store, schedule: list[ScheduledMatch]) -> list[MatchRecord]:
    """The matches that fill ``schedule``'s slots (aborted attempts aside)."""
    return [store.get_match(s.match_id) for s in schedule if s.match_id is not None]


def due_round(store: Store, config: TournamentConfig, tid: str,
              schedule: list[ScheduledMatch]) -> list[ScheduledMatch] | None:
    """The round to append to the stored ``schedule`` if its last round is
    played out and rounds are left (arena/tournament/growth.py appends it)."""
    return swiss_slots(config, tid, schedule, played_matches(store, schedule))


def rounds_left(config: TournamentConfig, schedule: list[ScheduledMatch]) -> int:
    """Rounds not yet paired."""
    assert config.schedule.rounds is not None
    return config.schedule.rounds - len(rounds_of(schedule)) if schedule else config.schedule.rounds


def pairing_problems(store: Store, config: TournamentConfig, tid: str) -> list[str]:
    """Each stored round against the rule: the round paired again from the
    rounds before it and their matches must seat the same tables."""
    schedule = store.get_schedule(tid)
    problems = []
    earlier: list[ScheduledMatch] = []
    for number, slots in rounds_of(schedule).items():
        expected = swiss_slots(config, tid, earlier, played_matches(store, earlier))
        if expected is None:
            problems.append(f"round {number} was paired before round {number - 1} was over")
        elif [(s.players, s.seed) for s in expected] != [(s.players, s.seed) for s in slots]:
            problems.append(f"round {number}: its tables are not the ones the Swiss pairing "
                            "rule gives after the rounds before it")
        earlier = earlier + slots
    return problems
