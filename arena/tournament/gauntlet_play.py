"""A gauntlet tournament (``[schedule] kind = "gauntlet"``): one challenger
against a field, a deck set at a time, until the stopping rule decides.

Each deck set is one table: the challenger and ``seats - 1`` members of the
field, taken in turn from the field in file order (so every member sits
equally often, ±1), house bots filling the seats a small field leaves
empty. In duplicate mode the table is played once per seat with the players
rotated and the same decks, so the challenger holds every seat's cards.

The tournament is created with its first deck set. Once every match of the
stored sets is over, the rule of arena/tournament/gauntlet.py is asked over
their outcomes (the challenger against the field members at its table,
house bots left out); while it says CONTINUE the next set is appended to the
stored schedule (``Store.extend_schedule``: once, whichever runner or node
gets there first). The decision is a function of the stored matches, so a
resumed or shared gauntlet takes the same one, and ``arena verify`` asks the
rule again after every set to check the stored sets.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from arena.games import get_game
from arena.storage.base import MatchRecord, ScheduledMatch, Store
from arena.tournament.config import TournamentConfig, table_seats
from arena.tournament.gauntlet import Decision, StoppingRule, Verdict, decide, set_outcome
from arena.tournament.plan import house_strategy
from arena.tournament.ranking import ranking_for
from arena.tournament.schedule import ScheduleKind, house_bot_names
from arena.tournament.separation import compare


def is_gauntlet(config: TournamentConfig) -> bool:
    return config.schedule.kind is ScheduleKind.GAUNTLET


def stopping_rule(config: TournamentConfig) -> StoppingRule:
    s = config.schedule
    assert s.max_sets is not None and s.alpha is not None and s.effect is not None
    return StoppingRule(alpha=s.alpha, effect=s.effect, max_sets=s.max_sets)


def challenger_of(config: TournamentConfig) -> str:
    assert config.schedule.challenger is not None, "a gauntlet config names its challenger"
    return config.schedule.challenger


def field_of(config: TournamentConfig) -> list[str]:
    """The entrants the challenger plays against, in file order."""
    return [name for name in config.entrant_names if name != challenger_of(config)]


def set_seed(seed: int, number: int) -> str:
    """The deck label of deck set ``number`` (1-based)."""
    return f"{seed}:set{number}"


def set_players(config: TournamentConfig, number: int, seats: int) -> list[str]:
    """The table of deck set ``number`` before rotation: the challenger, then
    the next ``seats - 1`` field members in turn, then house bots."""
    field = field_of(config)
    count = min(seats - 1, len(field))
    start = (number - 1) * count
    members = [field[(start + i) % len(field)] for i in range(count)]
    strategy = config.schedule.house_bot or get_game(config.game).default_house_bot
    return [challenger_of(config), *members, *house_bot_names(strategy, seats - 1 - count)]


def set_slots(config: TournamentConfig, tid: str, number: int,
              first_slot: int) -> list[ScheduledMatch]:
    """The stored rows of deck set ``number``; ``extra.set`` names it."""
    seats = table_seats(config.game, config.rules)
    players = set_players(config, number, seats)
    # Without duplicate the seats turn from set to set, so the challenger
    # does not keep the first seat.
    turns = range(seats) if config.duplicate else [(number - 1) % seats]
    return [ScheduledMatch(tournament_id=tid, slot=first_slot + i,
                           players=[players[(s + r) % seats] for s in range(seats)],
                           seed=set_seed(config.seed, number),
                           extra={"table": number - 1, "rotation": r if config.duplicate else 0,
                                  "set": number})
            for i, r in enumerate(turns)]


def sets_of(schedule: Sequence[ScheduledMatch]) -> dict[int, list[ScheduledMatch]]:
    """The stored schedule by deck set number."""
    sets: dict[int, list[ScheduledMatch]] = {}
    for slot in schedule:
        sets.setdefault(int(slot.extra.get("set", 1)), []).append(slot)
    return dict(sorted(sets.items()))


def outcome_of_set(config: TournamentConfig, slots: Sequence[ScheduledMatch],
                   matches: Mapping[str, MatchRecord]) -> int:
    """+1, -1 or 0: the challenger against the field members at its table
    over one played deck set (house bots are not the field)."""
    primary = ranking_for(config.game).primary
    players, figures = [], []
    for slot in slots:
        assert slot.match_id is not None, "only a played set has an outcome"
        match = matches[slot.match_id]
        values = (match.result or {}).get(primary.key) or []
        seated = [(p, v) for p, v in zip(match.players, values) if house_strategy(p) is None]
        players.append([p for p, _ in seated])
        figures.append([float(v) for _, v in seated])
    return set_outcome(challenger_of(config), players, figures, descending=primary.descending)


def decision_over(config: TournamentConfig, sets: Sequence[Sequence[ScheduledMatch]],
                  matches: Mapping[str, MatchRecord]) -> Decision:
    """The rule's verdict after the played deck ``sets``."""
    outcomes = [outcome_of_set(config, slots, matches) for slots in sets]
    return decide(outcomes.count(1), outcomes.count(-1), outcomes.count(0),
                  stopping_rule(config))


def by_id(matches: Sequence[MatchRecord]) -> dict[str, MatchRecord]:
    return {m.id: m for m in matches}


def next_set(config: TournamentConfig, tid: str, schedule: Sequence[ScheduledMatch],
             matches: Mapping[str, MatchRecord]) -> list[ScheduledMatch] | None:
    """The slots of the deck set after ``schedule``'s last; None while a
    slot is unplayed or once the rule has decided (the cap included)."""
    if any(slot.match_id is None for slot in schedule):
        return None
    sets = sets_of(schedule)
    if sets and decision_over(config, list(sets.values()), matches).verdict \
            is not Verdict.CONTINUE:
        return None
    return set_slots(config, tid, max(sets, default=0) + 1, len(schedule))


def first_set(config: TournamentConfig, tid: str) -> list[ScheduledMatch]:
    slots = next_set(config, tid, [], {})
    assert slots is not None, "the first deck set is always due"
    return slots


def stored_matches(store: Store, tid: str) -> dict[str, MatchRecord]:
    """The tournament's finished matches by id (one query, not one a slot)."""
    return by_id(store.finished_matches(tournament_id=tid))


def due_set(store: Store, config: TournamentConfig, tid: str,
            schedule: list[ScheduledMatch]) -> list[ScheduledMatch] | None:
    """The deck set to append to the stored ``schedule`` if the stored sets
    are played and the rule goes on (arena/tournament/growth.py appends it)."""
    return next_set(config, tid, schedule, stored_matches(store, tid))


def decided(store: Store, config: TournamentConfig, schedule: Sequence[ScheduledMatch]) -> bool:
    """Every stored slot played and the rule has stopped the gauntlet."""
    if not schedule or any(slot.match_id is None for slot in schedule):
        return False
    matches = stored_matches(store, schedule[0].tournament_id)
    return decision_over(config, list(sets_of(schedule).values()), matches).verdict \
        is not Verdict.CONTINUE


def expected_total(config: TournamentConfig, schedule: Sequence[ScheduledMatch],
                   stopped: bool) -> int:
    """Matches in all: the stored ones once the rule has stopped, else as
    many as the cap allows."""
    if stopped or not schedule:
        return len(schedule)
    return len(sets_of(schedule)[1]) * stopping_rule(config).max_sets


def gauntlet_progress(schedule: Sequence[ScheduledMatch], max_sets: int, *,
                      finished: bool) -> dict[str, int]:
    """``{done, total, set, max_sets}``: ``set`` is the deck set being played."""
    sets = sets_of(schedule)
    done = sum(1 for s in schedule if s.match_id is not None)
    per_set = len(next(iter(sets.values()))) if sets else 0
    return {"done": done, "total": len(schedule) if finished else per_set * max_sets,
            "set": max(sets, default=0), "max_sets": max_sets}


REASONS = {
    Verdict.CONTINUE: "playing on: the challenger is not yet separated from the field",
    Verdict.BETTER: "stopped: the challenger is ahead of the field",
    Verdict.WORSE: "stopped: the challenger is behind the field",
    Verdict.EVEN: "stopped: no difference of the stated effect between the challenger and "
                  "the field",
    Verdict.CAPPED: "stopped at the cap (max_sets) without a decision",
}


def summary(config: TournamentConfig, schedule: Sequence[ScheduledMatch],
            matches: Mapping[str, MatchRecord]) -> dict[str, Any]:
    """What the API, the page and the exports say of a gauntlet: the rule's
    decision over the played deck sets (``reason`` in words), and per field
    member the sign test of the standings over the deck sets it shared with
    the challenger."""
    sets = sets_of(schedule)
    played = [slots for slots in sets.values() if all(s.match_id for s in slots)]
    decision = decision_over(config, played, matches)
    challenger = challenger_of(config)
    finished = [matches[s.match_id] for slots in played for s in slots
                if s.match_id is not None]
    opponents = []
    for member in field_of(config):
        sep = compare(challenger, member, finished)
        opponents.append({"opponent": member, "deck_sets": sep.deck_sets,
                          "wins": sep.a_better, "losses": sep.b_better,
                          "ties": sep.deck_sets - sep.a_better - sep.b_better,
                          "p_value": round(sep.p_value, 6), "significant": sep.significant,
                          "method": sep.method})
    open_set = any(s.match_id is None for s in schedule)
    verdict = Verdict.CONTINUE if open_set else decision.verdict
    wire = decision.to_wire()
    wire.update(verdict=verdict.value, challenger=challenger, field=field_of(config),
                ties=decision.sets - decision.wins - decision.losses,
                reason=_reason(verdict, decision), opponents=opponents)
    return wire


def gauntlet_result(store: Store, config: TournamentConfig, tid: str) -> dict[str, Any] | None:
    """:func:`summary` of a stored gauntlet; None for another kind."""
    if not is_gauntlet(config):
        return None
    return summary(config, store.get_schedule(tid), stored_matches(store, tid))


def gauntlet_lines(result: Mapping[str, Any] | None) -> list[str]:
    """The organiser's lines after the standings."""
    if not result:
        return []
    lines = [f"gauntlet: {result['challenger']} against {', '.join(result['field'])}: "
             f"{result['reason']}",
             f"  rule: {result['method']}, alpha {result['alpha']:g}, effect "
             f"{result['effect']:g}, at most {result['max_sets']} deck sets"]
    for row in result["opponents"]:
        lines.append(f"  vs {row['opponent']}: {row['wins']} won, {row['losses']} lost, "
                     f"{row['ties']} tied of {row['deck_sets']} deck sets "
                     f"(sign test p = {row['p_value']:.4g})")
    return lines


def _reason(verdict: Verdict, d: Decision) -> str:
    text = (f"{REASONS[verdict]} after {d.sets} deck set(s) "
            f"({d.wins} won, {d.losses} lost, {d.sets - d.wins - d.losses} tied)")
    if verdict in (Verdict.BETTER, Verdict.WORSE):
        text += (f"; the rule declares a difference that is not there at most "
                 f"{d.rule.alpha:g} of the time")
    return text


def pairing_problems(store: Store, config: TournamentConfig, tid: str) -> list[str]:
    """Each stored deck set against the rule: seated as the rule seats it,
    and played only while the rule went on; the last one stopped it."""
    schedule = store.get_schedule(tid)
    matches = stored_matches(store, tid)
    problems = []
    earlier: list[list[ScheduledMatch]] = []
    slot = 0
    for number, slots in sets_of(schedule).items():
        expected = set_slots(config, tid, number, slot)
        if [(s.players, s.seed) for s in expected] != [(s.players, s.seed) for s in slots]:
            problems.append(f"deck set {number}: its tables are not the ones the gauntlet "
                            "seats")
        if earlier and decision_over(config, earlier, matches).verdict is not Verdict.CONTINUE:
            problems.append(f"deck set {number} was played after the stopping rule had "
                            "decided")
        earlier.append(slots)
        slot += len(slots)
    if all(s.match_id for s in schedule) and earlier \
            and decision_over(config, earlier, matches).verdict is Verdict.CONTINUE:
        problems.append("the gauntlet ended before its stopping rule decided")
    return problems
