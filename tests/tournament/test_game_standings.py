"""Standings rank every game by the game's own description: thirteen by total
points, Muushig as before; one ladder per game."""

from __future__ import annotations

import csv

import pytest
from openskill.models import PlackettLuce

from arena.games import get_game
from arena.games.thirteen.scoring import rank_places
from arena.storage.base import MatchRecord, MatchStatus, SeatFaults
from arena.tournament.export import export_results, read_json, read_standings_csv, write_json
from arena.tournament.progress import render_table
from arena.tournament.ranking import RankingSpecError, parse_ranking, ranking_for
from arena.tournament.separation import compare
from arena.tournament.standings import (
    MixedGamesError,
    bootstrap_interval,
    compute_standings,
    rating_history,
    standings_by_game,
)

FOUR = ["ann", "bob", "cid", "dan"]


def thirteen(mid: str, players, totals, *, at: float, seed: str | None = None,
             faults=None) -> MatchRecord:
    return MatchRecord(
        id=mid, game="thirteen", players=list(players), rules={}, limits={},
        status=MatchStatus.FINISHED, started_at=at - 1, finished_at=at, tournament_id="t",
        seed=seed, faults=faults,
        result={"totals": list(totals), "deal_scores": [list(totals)],
                "ranks": rank_places(totals)})


def muushig(mid: str, players, stars, sums, ranks, *, at: float) -> MatchRecord:
    return MatchRecord(
        id=mid, game="muushig", players=list(players), rules={}, limits={},
        status=MatchStatus.FINISHED, started_at=at - 1, finished_at=at,
        result={"stars": stars, "sums": sums, "ranks": ranks})


def by_bot(rows):
    return {r.bot: r for r in rows}


def test_thirteen_ranks_by_total_points_with_shared_places():
    matches = [thirteen("m1", FOUR, [12, -4, -4, -4], at=1),
               thirteen("m2", FOUR, [-10, 6, 6, -2], at=2)]
    rows = compute_standings(matches)
    # ann 2, bob 2, cid 2, dan -6: three share first place
    assert [(r.rank, r.bot, r.points) for r in rows] == [
        (1, "ann", 2), (1, "bob", 2), (1, "cid", 2), (4, "dan", -6)]
    rows = by_bot(rows)
    assert rows["ann"].wins == 1 and rows["bob"].wins == 1 and rows["dan"].wins == 0
    assert rows["ann"].avg_place == 2.5 and rows["bob"].avg_place == 1.5
    assert rows["ann"].game == "thirteen" and rows["ann"].figures == {"totals": 2}


def test_more_points_outrank_more_wins():
    matches = [thirteen("m1", FOUR, [1, 0, 0, -1], at=1),
               thirteen("m2", FOUR, [1, 0, 0, -1], at=2),
               thirteen("m3", FOUR, [-30, 30, 0, 0], at=3)]
    rows = compute_standings(matches)
    assert rows[0].bot == "bob" and rows[0].wins == 1
    assert by_bot(rows)["ann"].wins == 2 and by_bot(rows)["ann"].rank == 4


def test_thirteen_rows_carry_no_stars_but_points_per_match_with_its_interval():
    totals = [[9, -3, -3, -3], [-1, 5, -2, -2], [4, 0, -4, 0], [2, 2, -2, -2]]
    matches = [thirteen(f"m{i}", FOUR, t, at=i) for i, t in enumerate(totals)]
    rows = compute_standings(matches, bootstrap_samples=300, seed=5)
    ann = by_bot(rows)["ann"]
    assert ann.points == 14 and ann.points_per_match == 3.5
    assert (ann.points_ci_low, ann.points_ci_high) == bootstrap_interval(
        [9, -1, 4, 2], samples=300, seed="5:ann")
    assert ann.points_ci_low < ann.points_per_match < ann.points_ci_high
    assert (ann.stars, ann.score_sum, ann.stars_per_match, ann.stars_ci_low) == (
        None, None, None, None)


def test_thirteen_ratings_are_plackett_luce_over_the_places():
    matches = [thirteen("m1", FOUR, [6, 2, -4, -4], at=1),
               thirteen("m2", ["dan", "cid", "bob", "ann"], [3, 1, -2, -2], at=2)]
    model = PlackettLuce()
    r = {b: model.rating(name=b) for b in FOUR}
    for m in matches:
        new = model.rate([[r[b]] for b in m.players], ranks=m.result["ranks"])
        r.update({b: t[0] for b, t in zip(m.players, new)})
    for row in compute_standings(matches):
        assert row.rating_mu == pytest.approx(r[row.bot].mu)
        assert row.rating_sigma == pytest.approx(r[row.bot].sigma)
    assert [h[0] for h in rating_history(matches, "ann")] == ["m1", "m2"]


def test_thirteen_fault_columns_are_counted_per_seat():
    faults = [SeatFaults(timeouts=2), SeatFaults(illegal=1), SeatFaults(disconnects=1),
              SeatFaults()]
    rows = by_bot(compute_standings([thirteen("m1", FOUR, [1, 0, 0, -1], at=1,
                                              faults=faults)]))
    assert (rows["ann"].timeouts, rows["bob"].illegal, rows["cid"].disconnects) == (2, 1, 1)


def test_muushig_rows_carry_the_same_figures_under_neutral_names_too():
    rows = compute_standings([
        muushig("m1", FOUR + ["eve"], [2, 1, 1, 1, 0], [5, 10, 10, 20, 30], [1, 2, 2, 4, 5],
                at=1)])
    ann = by_bot(rows)["ann"]
    assert (ann.stars, ann.score_sum) == (2, 5)
    assert (ann.game, ann.points, ann.figures) == ("muushig", 2, {"stars": 2, "sums": 5})
    assert ann.points_per_match == ann.stars_per_match == 2.0
    assert (ann.points_ci_low, ann.points_ci_high) == (ann.stars_ci_low, ann.stars_ci_high)


def mixed() -> list[MatchRecord]:
    return [thirteen("t1", FOUR, [5, 1, -3, -3], at=1),
            muushig("u1", FOUR + ["eve"], [0, 2, 1, 1, 1], [9, 1, 4, 4, 4], [5, 1, 2, 2, 2],
                    at=2)]


def test_standings_of_several_games_are_refused_with_a_way_out():
    with pytest.raises(MixedGamesError, match="muushig, thirteen.*game=NAME"):
        compute_standings(mixed())
    with pytest.raises(MixedGamesError):
        rating_history(mixed(), "ann")


def test_a_ladder_per_game():
    ladders = standings_by_game(mixed())
    assert sorted(ladders) == ["muushig", "thirteen"]
    assert [r.bot for r in ladders["thirteen"]] == ["ann", "bob", "cid", "dan"]
    assert ladders["thirteen"][0].points == 5 and ladders["thirteen"][0].matches == 1
    assert ladders["muushig"][0].bot == "bob" and ladders["muushig"][0].stars == 2
    assert compute_standings(mixed(), game="thirteen") == ladders["thirteen"]
    assert {r.game for r in compute_standings(mixed(), game="muushig")} == {"muushig"}
    assert compute_standings(mixed(), game="nosuch") == []
    assert len(rating_history(mixed(), "ann", game="thirteen")) == 1


def test_separation_compares_thirteen_points_per_deck_set():
    # ann beats bob on points in 8 deck sets of 4 rotations each: separated.
    matches = []
    for t in range(8):
        for r in range(4):
            seats = FOUR[r:] + FOUR[:r]
            points = {"ann": 3, "bob": 1, "cid": -2, "dan": -2}
            matches.append(thirteen(f"m{t}-{r}", seats, [points[b] for b in seats],
                                    at=t * 10 + r, seed=f"0:{t}"))
    sep = compare("ann", "bob", matches)
    assert (sep.deck_sets, sep.a_better, sep.b_better) == (8, 8, 0) and sep.significant
    assert compare("bob", "ann", matches).b_better == 8
    rows = compute_standings(matches)
    assert rows[0].bot == "ann" and rows[0].vs_next["significant"]


def test_separation_turns_round_a_primary_figure_where_less_is_better(monkeypatch):
    spec = parse_ranking("golf", {"rank_by": [{"key": "strokes", "order": "asc"}]})
    monkeypatch.setattr("arena.tournament.separation.ranking_for", lambda game: spec)
    matches = [MatchRecord(id=f"g{t}", game="golf", players=["a", "b"], rules={}, limits={},
                           status=MatchStatus.FINISHED, started_at=0, finished_at=t,
                           seed=f"0:{t}", result={"strokes": [70, 75], "ranks": [1, 2]})
               for t in range(6)]
    assert compare("a", "b", matches).a_better == 6


def test_each_game_describes_its_ranking():
    assert get_game("thirteen").extra["standings"]["rank_by"][0]["key"] == "totals"
    spec = ranking_for("thirteen")
    assert (spec.primary.key, spec.primary.descending, spec.places) == ("totals", True, "ranks")
    spec = ranking_for("muushig")
    assert [(k.key, k.descending) for k in spec.keys] == [("stars", True), ("sums", False)]


@pytest.mark.parametrize("descriptor, words", [
    (None, "is missing"),
    ({"rank_by": []}, "non-empty list"),
    ({"rank_by": [{"order": "desc"}]}, "needs a 'key'"),
    ({"rank_by": [{"key": "x", "order": "up"}]}, "'desc' or 'asc'"),
])
def test_a_malformed_description_is_named(descriptor, words):
    with pytest.raises(RankingSpecError, match=words):
        parse_ranking("golf", descriptor)


def test_thirteen_standings_export_with_their_own_columns(tmp_path):
    matches = [thirteen(f"m{i}", FOUR[i:] + FOUR[:i], [7, -1, -3, -3], at=i) for i in range(4)]
    rows = compute_standings(matches, bootstrap_samples=100)
    paths = export_results(tmp_path, rows, matches)
    with paths[1].open() as f:
        header = next(csv.reader(f))
    assert "stars" not in header and "score_sum" not in header
    assert {"game", "points", "points_per_match", "points_ci_low", "figures.totals"} <= set(header)
    assert read_standings_csv(paths[1]) == rows
    assert read_json(write_json(tmp_path / "r.json", rows, matches))[0] == rows
    with paths[2].open() as f:
        lines = list(csv.DictReader(f))
    assert lines[0] == {"match": "m0", "finished_at": "0", "seat": "0", "bot": "ann",
                        "rank": "1", "totals": "7", "timeouts": "0", "illegal": "0",
                        "disconnects": "0"}


def test_the_cli_table_shows_points_for_thirteen():
    rows = compute_standings([thirteen("m1", FOUR, [7, -1, -3, -3], at=1)])
    header = render_table(rows).splitlines()[0]
    assert header.split()[:4] == ["#", "bot", "matches", "points"]
    assert "points/match (95% CI)" in header and "stars" not in header
