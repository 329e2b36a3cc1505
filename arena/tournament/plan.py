"""From a tournament file to the rows the store keeps (pure glue for the runner)."""

from __future__ import annotations

from arena.games import get_game
from arena.storage.base import ScheduledMatch
from arena.tournament.config import TournamentConfig, table_seats
from dataclasses import replace

from arena.tournament.schedule import ScheduleKind, Table, deck_seed, house_bot_names, make_schedule


def house_for(config: TournamentConfig, *, seats: int, default_house_bot: str) -> list[str]:
    """Names of the house bots that fill empty seats (none with enough entrants)."""
    missing = max(0, seats - len(config.entrants))
    return house_bot_names(config.schedule.house_bot or default_house_bot, missing)


def game_plan(config: TournamentConfig) -> tuple[list[Table], list[Table]]:
    """(the schedule, its reserve tables) of ``config`` for its own game: the
    seats its rules give (e.g. thirteen's or Muushig's ``players``) and, unless
    the file names one, the game's default house bot in empty seats."""
    spec = get_game(config.game)
    return plan_parts(config, seats=table_seats(config.game, config.rules),
                      default_house_bot=spec.default_house_bot)


def plan(config: TournamentConfig, *, seats: int, default_house_bot: str) -> list[Table]:
    """The whole schedule of ``config`` for a game with ``seats`` seats,
    reserve tables (see :func:`reserve_tables`) included."""
    base, reserve = plan_parts(config, seats=seats, default_house_bot=default_house_bot)
    return base + reserve


def plan_parts(config: TournamentConfig, *, seats: int,
               default_house_bot: str) -> tuple[list[Table], list[Table]]:
    """(the schedule, its reserve tables)."""
    house = house_for(config, seats=seats, default_house_bot=default_house_bot)
    base = make_schedule(
        config.entrant_names, seats=seats, kind=config.schedule.kind,
        max_tables=config.schedule.max_tables, tables=config.schedule.tables,
        duplicate=config.duplicate, seed=config.seed, house_names=house)
    return base, reserve_tables(config, base, seats=seats, house=house)


def reserve_tables(config: TournamentConfig, base: list[Table], *, seats: int,
                   house: list[str]) -> list[Table]:
    """With ``until_separated``: up to ``max_extra_matches`` more matches, as
    whole balanced deck sets after the schedule, played only while the
    standings are not separated (arena/tournament/extension.py)."""
    per_table = seats if config.duplicate else 1
    count = config.schedule.max_extra_matches // per_table
    if not config.schedule.until_separated or count == 0:
        return []
    first_table = max(t.table for t in base) + 1
    extra = make_schedule(config.entrant_names, seats=seats, kind=ScheduleKind.BALANCED,
                          tables=count, duplicate=config.duplicate,
                          seed=config.seed, house_names=house)
    return [replace(t, slot=len(base) + t.slot, table=first_table + t.table,
                    seed=deck_seed(config.seed, first_table + t.table)) for t in extra]


def scheduled_matches(tournament_id: str, tables: list[Table],
                      reserve_from: int | None = None) -> list[ScheduledMatch]:
    """Schedule rows for ``Store.create_tournament``; ``extra`` keeps the
    table and rotation (the web groups duplicate rotations by table) and
    marks reserve slots (from slot ``reserve_from`` on)."""
    return [ScheduledMatch(tournament_id=tournament_id, slot=t.slot, players=list(t.players),
                           seed=t.seed, extra={"table": t.table, "rotation": t.rotation,
                                               **({"reserve": True} if reserve_from is not None
                                                  and t.slot >= reserve_from else {})})
            for t in tables]


def house_strategy(name: str) -> str | None:
    """``house-heuristic-2`` -> ``heuristic``; None for a name not made by
    :func:`house_bot_names`."""
    from arena.tournament.schedule import HOUSE_PREFIX

    if not name.startswith(HOUSE_PREFIX):
        return None
    strategy, _, number = name[len(HOUSE_PREFIX):].rpartition("-")
    return strategy if strategy and number.isdigit() else None
