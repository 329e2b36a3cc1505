"""From a tournament file to the rows the store keeps (pure glue for the runner)."""

from __future__ import annotations

from arena.storage.base import ScheduledMatch
from arena.tournament.config import TournamentConfig
from arena.tournament.schedule import Table, house_bot_names, make_schedule


def house_for(config: TournamentConfig, *, seats: int, default_house_bot: str) -> list[str]:
    """Names of the house bots that fill empty seats (none with enough entrants)."""
    missing = max(0, seats - len(config.entrants))
    return house_bot_names(config.schedule.house_bot or default_house_bot, missing)


def plan(config: TournamentConfig, *, seats: int, default_house_bot: str) -> list[Table]:
    """The whole schedule of ``config`` for a game with ``seats`` seats."""
    return make_schedule(
        config.entrant_names, seats=seats, kind=config.schedule.kind,
        max_tables=config.schedule.max_tables, tables=config.schedule.tables,
        duplicate=config.duplicate, seed=config.seed,
        house_names=house_for(config, seats=seats, default_house_bot=default_house_bot))


def scheduled_matches(tournament_id: str, tables: list[Table]) -> list[ScheduledMatch]:
    """Schedule rows for ``Store.create_tournament``; ``extra`` keeps the
    table and rotation (the web groups duplicate rotations by table)."""
    return [ScheduledMatch(tournament_id=tournament_id, slot=t.slot, players=list(t.players),
                           seed=t.seed, extra={"table": t.table, "rotation": t.rotation})
            for t in tables]


def house_strategy(name: str) -> str | None:
    """``house-heuristic-2`` -> ``heuristic``; None for a name not made by
    :func:`house_bot_names`."""
    from arena.tournament.schedule import HOUSE_PREFIX

    if not name.startswith(HOUSE_PREFIX):
        return None
    strategy, _, number = name[len(HOUSE_PREFIX):].rpartition("-")
    return strategy if strategy and number.isdigit() else None
