"""The gauntlet as a tournament kind (arena/tournament/gauntlet_play.py):
its file keys, how each deck set is seated, and when the schedule stops
growing, with hand-built matches (no server)."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import replace

import pytest
from hypothesis import given, settings, strategies as st

from arena.storage.base import MatchRecord, MatchStatus, ScheduledMatch
from arena.tournament.config import ConfigError, config_from_wire, parse_config
from arena.tournament.gauntlet import StoppingRule, Verdict, decide
from arena.tournament.gauntlet_play import (
    field_of,
    first_set,
    next_set,
    sets_of,
    stopping_rule,
    summary,
)


def gauntlet_doc(n_field: int = 4, **schedule: object) -> dict:
    entrants = [{"name": "v7", "remote": True}] + [
        {"name": f"f{i}", "remote": True} for i in range(1, n_field + 1)]
    return {"name": "g", "seed": 3, "schedule": {"kind": "gauntlet", "challenger": "v7",
                                                 **schedule},
            "entrant": entrants}


def config(n_field: int = 4, **schedule: object):
    return parse_config(gauntlet_doc(n_field, **schedule))


# -- the file -------------------------------------------------------------------

def test_a_gauntlet_needs_a_challenger():
    doc = gauntlet_doc()
    del doc["schedule"]["challenger"]
    with pytest.raises(ConfigError, match="schedule.challenger: kind = \"gauntlet\" needs"):
        parse_config(doc)


def test_the_challenger_must_be_an_entrant():
    with pytest.raises(ConfigError, match="schedule.challenger: 'v8' is not an entrant"):
        parse_config(gauntlet_doc(challenger="v8"))


def test_a_gauntlet_needs_a_field():
    with pytest.raises(ConfigError, match="at least one more entrant"):
        parse_config(gauntlet_doc(0))


@pytest.mark.parametrize("key,value", [("challenger", "a"), ("max_sets", 10),
                                       ("alpha", 0.1), ("effect", 0.2)])
def test_gauntlet_keys_are_refused_in_other_kinds(key, value):
    doc = {"name": "t", "schedule": {"kind": "round_robin", key: value},
           "entrant": [{"name": "a", "remote": True}]}
    with pytest.raises(ConfigError, match=f"schedule.{key}: only kind = \"gauntlet\""):
        parse_config(doc)


@pytest.mark.parametrize("key,value", [("rounds", 3), ("tables", 4), ("until_separated", True)])
def test_other_kinds_keys_are_refused_in_a_gauntlet(key, value):
    with pytest.raises(ConfigError, match=f"schedule.{key}: belongs to"):
        parse_config(gauntlet_doc(**{key: value}))


@pytest.mark.parametrize("key,value", [("alpha", 0.5), ("alpha", 0), ("effect", 0.5),
                                       ("max_sets", 0), ("alpha", "low")])
def test_the_rule_s_numbers_are_checked(key, value):
    with pytest.raises(ConfigError, match=f"schedule.{key}:"):
        parse_config(gauntlet_doc(**{key: value}))


def test_the_rule_defaults_to_the_stopping_rule_s_own_and_survives_storage():
    cfg = config()
    assert stopping_rule(cfg) == StoppingRule()
    again = config_from_wire(cfg.to_wire())
    assert again.schedule == cfg.schedule
    tuned = config(max_sets=12, alpha=0.01, effect=0.3)
    assert stopping_rule(config_from_wire(tuned.to_wire())) == StoppingRule(
        alpha=0.01, effect=0.3, max_sets=12)


# -- seating ----------------------------------------------------------------------

def grow(cfg, outcome_of, limit: int = 10_000):
    """Play a gauntlet on paper: every match's stars come from
    ``outcome_of(set_number, players)``; returns the final schedule and
    the matches by id."""
    schedule: list[ScheduledMatch] = []
    matches: dict[str, MatchRecord] = {}
    while len(schedule) < limit:
        more = next_set(cfg, "g-1", schedule, matches)
        if more is None:
            return schedule, matches
        for slot in more:
            match_id = f"m{slot.slot}"
            stars = outcome_of(int(slot.extra["set"]), slot.players)
            matches[match_id] = MatchRecord(
                id=match_id, game="muushig", players=list(slot.players), rules={}, limits={},
                status=MatchStatus.FINISHED, started_at=0.0, tournament_id="g-1",
                seed=slot.seed, result={"stars": stars, "sums": [0] * len(stars),
                                        "ranks": [1] * len(stars)})
            schedule.append(replace(slot, match_id=match_id))
    raise AssertionError("the gauntlet never stopped")


def grow_with(cfg, outcome_of) -> list[ScheduledMatch]:
    return grow(cfg, outcome_of)[0]


def challenger_wins(_number: int, players: list[str]) -> list[int]:
    return [1 if p == "v7" else 0 for p in players]


def test_every_deck_set_is_the_challenger_and_field_members_on_one_deal_rotated():
    cfg = config(n_field=6)
    slots = first_set(cfg, "g-1")
    assert len(slots) == 5  # duplicate: one match per seat
    assert len({s.seed for s in slots}) == 1
    assert [s.players.index("v7") for s in slots] == [0, 4, 3, 2, 1]  # every seat once
    assert sorted(slots[0].players) == ["f1", "f2", "f3", "f4", "v7"]


@given(n_field=st.integers(min_value=4, max_value=30), sets=st.integers(1, 60))
@settings(max_examples=60, deadline=None)
def test_field_members_sit_equally_often_within_one(n_field, sets):
    cfg = config(n_field=n_field, max_sets=sets)
    # The challenger never separates (a tie every set): the cap ends it.
    schedule = grow_with(cfg, lambda _n, players: [0] * len(players))
    by_set = sets_of(schedule)
    assert len(by_set) == sets
    seen = Counter(p for slots in by_set.values() for p in slots[0].players if p != "v7")
    counts = [seen.get(member, 0) for member in field_of(cfg)]
    assert max(counts) - min(counts) <= 1
    assert len({slots[0].seed for slots in by_set.values()}) == sets  # new decks each set


def test_a_small_field_is_filled_with_house_bots():
    cfg = config(n_field=2)
    players = first_set(cfg, "g-1")[0].players
    assert players == ["v7", "f1", "f2", "house-heuristic-1", "house-heuristic-2"]


# -- when it stops ------------------------------------------------------------------

def test_a_challenger_that_wins_every_set_stops_as_soon_as_the_rule_says_better():
    cfg = config()
    schedule, matches = grow(cfg, challenger_wins)
    sets = len(sets_of(schedule))
    rule = stopping_rule(cfg)
    assert decide(sets, 0, 0, rule).verdict is Verdict.BETTER
    assert decide(sets - 1, 0, 0, rule).verdict is Verdict.CONTINUE
    result = summary(cfg, schedule, matches)
    assert result["verdict"] == "better" and result["deck_sets"] == sets
    assert result["wins"] == [sets, 0] and result["reason"].startswith(
        "stopped: the challenger is ahead of the field after")
    # Per field member: the deck sets it shared with the challenger, all won.
    shared = {row["opponent"]: row["deck_sets"] for row in result["opponents"]}
    assert sum(shared.values()) == 4 * sets
    assert all(row["wins"] == row["deck_sets"] and row["losses"] == 0
               for row in result["opponents"])


def test_the_summary_of_a_set_still_playing_says_so():
    cfg = config()
    result = summary(cfg, first_set(cfg, "g-1"), {})
    assert result["verdict"] == "continue" and result["deck_sets"] == 0
    assert result["reason"].startswith("playing on")


def test_a_challenger_that_loses_every_set_is_found_worse():
    cfg = config()
    schedule = grow_with(cfg, lambda _n, ps: [0 if p == "v7" else 1 for p in ps])
    assert decide(0, len(sets_of(schedule)), 0, stopping_rule(cfg)).verdict is Verdict.WORSE


def test_no_set_is_added_past_the_cap():
    cfg = config(max_sets=3)
    schedule = grow_with(cfg, lambda n, ps: challenger_wins(n, ps) if n % 2 else
                         [0 if p == "v7" else 1 for p in ps])
    assert len(sets_of(schedule)) == 3


def test_no_set_is_added_while_a_slot_of_the_last_is_open():
    cfg = config()
    assert next_set(cfg, "g-1", first_set(cfg, "g-1"), {}) is None


def test_house_bots_are_not_the_field():
    # The challenger scores below the house bots but above its one field
    # member at every set: it is better than the field.
    cfg = config(n_field=1, effect=0.45, alpha=0.1)
    schedule = grow_with(cfg, lambda _n, ps: [2 if p.startswith("house") else
                                              1 if p == "v7" else 0 for p in ps])
    rule = stopping_rule(cfg)
    sets = len(sets_of(schedule))
    assert decide(sets, 0, 0, rule).verdict is Verdict.BETTER
    assert sets == math.ceil(math.log(2 / rule.alpha) / math.log(2 * (0.5 + rule.effect)))


def test_until_separated_on_the_command_line_is_refused_for_a_gauntlet(tmp_path):
    from arena.cli import _parser
    from arena.storage.sqlite import SqliteStore
    from arena.tournament.command import TournamentCommandError, _load

    path = tmp_path / "g.toml"
    path.write_text('name = "g"\n[schedule]\nkind = "gauntlet"\nchallenger = "v7"\n'
                    '[[entrant]]\nname = "v7"\nremote = true\n'
                    '[[entrant]]\nname = "v6"\nremote = true\n')
    args = _parser().parse_args(["tournament", str(path), "--db", str(tmp_path / "a.db"),
                                 "--until-separated"])
    store = SqliteStore(tmp_path / "a.db")
    with pytest.raises(TournamentCommandError, match="a gauntlet stops by its own rule"):
        _load(args, store)
    assert store.list_tournaments() == []
    store.close()


def test_the_example_gauntlet_file_is_valid():
    from pathlib import Path

    from arena.tournament.config import load_config

    cfg = load_config(Path(__file__).resolve().parents[2] / "examples" / "gauntlet.toml")
    assert cfg.schedule.challenger == "py-heuristic"
    assert field_of(cfg) == ["py-random", "js-msgpack"]
    assert stopping_rule(cfg) == StoppingRule(alpha=0.05, effect=0.3, max_sets=40)
