"""``until_separated``: play reserve deck sets until the standings separate.

A tournament with ``[schedule] until_separated = true`` (or ``arena
tournament --until-separated``) carries reserve tables after its schedule,
at most ``max_extra_matches`` matches in whole deck sets. After the schedule,
before each reserve deck set, the runner asks :func:`separated`: every pair
of neighbours in the standings must be significantly apart by the sign test
of arena/tournament/separation.py at level ``ALPHA / looks``, where ``looks``
is the number of times the rule may be asked (once after the schedule and
once after each reserve deck set). Dividing the level by the number of looks
(Bonferroni) keeps the chance of stopping on a difference that is not there
at most ``ALPHA`` however often the rule is asked. Neighbours that are both
house bots are the same program and are not compared.
"""

from __future__ import annotations

from typing import Sequence

from arena.storage.base import ScheduledMatch
from arena.tournament.schedule import HOUSE_PREFIX
from arena.tournament.separation import ALPHA
from arena.tournament.standings import StandingRow


def is_reserve(slot: ScheduledMatch) -> bool:
    return bool(slot.extra.get("reserve"))


def reserve_groups(schedule: Sequence[ScheduledMatch]) -> list[list[ScheduledMatch]]:
    """Reserve slots by deck set, in playing order."""
    groups: dict[object, list[ScheduledMatch]] = {}
    for slot in schedule:
        if is_reserve(slot):
            groups.setdefault(slot.extra.get("table", slot.seed), []).append(slot)
    return list(groups.values())


def stopping_level(reserve_sets: int) -> float:
    return ALPHA / (1 + reserve_sets)


def separated(rows: Sequence[StandingRow], level: float) -> bool:
    """Whether every pair of neighbours (house pairs aside) is apart at ``level``."""
    pairs = [(a, b) for a, b in zip(rows, rows[1:])
             if not (a.bot.startswith(HOUSE_PREFIX) and b.bot.startswith(HOUSE_PREFIX))]
    if not pairs:
        return True
    return all(a.vs_next is not None and a.vs_next["p_value"] < level for a, _ in pairs)
