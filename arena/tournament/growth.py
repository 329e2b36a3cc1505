"""Schedules that grow while they are played: Swiss rounds (paired from the
standings, arena/tournament/swiss_play.py) and gauntlet deck sets (added
while the stopping rule goes on, arena/tournament/gauntlet_play.py).

Both are created with their first unit (a round, a deck set); the runner
on one node, every node of a shared store and every ``--workers`` process
ask :func:`extend_if_due` when they find no open slot, and the store
appends the next unit once. The runners and ``arena verify`` ask only this
module, so a kind that grows is added here and nowhere in them.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from arena.storage.base import ScheduledMatch, Store
from arena.tournament import gauntlet_play, swiss_play
from arena.tournament.config import TournamentConfig, config_from_wire
from arena.tournament.schedule import ScheduleKind


def grows(config: TournamentConfig) -> bool:
    return swiss_play.is_swiss(config) or gauntlet_play.is_gauntlet(config)


def first_slots(config: TournamentConfig, tid: str) -> list[ScheduledMatch]:
    """The schedule a growing tournament is created with."""
    if gauntlet_play.is_gauntlet(config):
        return gauntlet_play.first_set(config, tid)
    return swiss_play.first_round(config, tid)


# A kind's next unit after the stored schedule (store, config, tournament
# id, schedule), or None while none is due.
NextUnit = Callable[[Store, TournamentConfig, str, list[ScheduledMatch]],
                    list[ScheduledMatch] | None]


def next_unit(config: TournamentConfig) -> NextUnit:
    if gauntlet_play.is_gauntlet(config):
        return gauntlet_play.due_set
    return swiss_play.due_round


def extend_if_due(store: Store, config: TournamentConfig, tid: str) -> bool:
    """Append the next unit if the stored ones are played and another is
    due; True when the schedule has open slots (added here or by another
    node meanwhile)."""
    slots = next_unit(config)(store, config, tid, store.get_schedule(tid))
    if slots is None:
        return False
    store.extend_schedule(tid, slots)  # False: another node added the same unit
    return True


def stored_problems(store: Store, wire: dict[str, Any], tid: str) -> list[str]:
    """What ``arena verify`` finds wrong with the stored units of a growing
    tournament (``wire``: its stored config): each round or deck set
    against its kind's rule. Nothing for a schedule made whole at the start."""
    kind = (wire.get("schedule") or {}).get("kind")
    if kind not in (ScheduleKind.SWISS.value, ScheduleKind.GAUNTLET.value):
        return []
    config = config_from_wire(wire)
    if gauntlet_play.is_gauntlet(config):
        return gauntlet_play.pairing_problems(store, config, tid)
    return swiss_play.pairing_problems(store, config, tid)


def fully_grown(store: Store, config: TournamentConfig,
                schedule: list[ScheduledMatch]) -> bool:
    """No unit will be added any more: every Swiss round is paired, or the
    gauntlet's rule has stopped it (then every slot is played)."""
    if gauntlet_play.is_gauntlet(config):
        return gauntlet_play.decided(store, config, schedule)
    return swiss_play.rounds_left(config, schedule) == 0


def complete(store: Store, config: TournamentConfig, tid: str) -> bool:
    schedule = store.get_schedule(tid)
    return (all(s.match_id is not None for s in schedule)
            and fully_grown(store, config, schedule))


def expected_total(store: Store, config: TournamentConfig,
                   schedule: list[ScheduledMatch]) -> int:
    """Matches the tournament will have played in all, as far as is known:
    a Swiss tournament every round the size of the first; a gauntlet up to
    its cap until the rule stops it, then what it played."""
    if not schedule:
        return 0
    if gauntlet_play.is_gauntlet(config):
        return gauntlet_play.expected_total(
            config, schedule, gauntlet_play.decided(store, config, schedule))
    from arena.tournament.swiss import rounds_of

    per_round = len(next(iter(rounds_of(schedule).values())))
    assert config.schedule.rounds is not None
    return per_round * config.schedule.rounds


def schedule_progress(schedule: Sequence[ScheduledMatch], config: Mapping[str, Any] | None,
                      *, finished: bool = False) -> dict[str, int]:
    """Matches played of all, for pages and the API (``config``: the stored
    tournament config). A Swiss tournament counts its rounds not yet paired
    and names the round being played; a gauntlet counts up to its cap until
    it is ``finished`` (then what it played) and names its deck set."""
    from arena.tournament.swiss import schedule_progress as swiss_progress

    rules = (config or {}).get("schedule")
    if isinstance(rules, dict) and rules.get("kind") == "gauntlet" and rules.get("max_sets"):
        return gauntlet_play.gauntlet_progress(schedule, int(rules["max_sets"]),
                                               finished=finished)
    return swiss_progress(schedule, config)
