"""Exported results read back to the same standings; the terminal shows them."""

from __future__ import annotations

import csv
import io
import json

import pytest

from arena.storage.base import MatchRecord, MatchStatus, SeatFaults
from arena.tournament.export import (
    export_results,
    read_json,
    read_standings_csv,
    results_document,
    write_json,
)
from arena.tournament.progress import TournamentProgress, format_eta, render_table
from arena.tournament.standings import compute_standings

FIVE = ["ann", "bob", "cid", "dan", "eve"]


def matches() -> list[MatchRecord]:
    out = []
    for i in range(4):
        players = FIVE[i:] + FIVE[:i]
        out.append(MatchRecord(
            id=f"m{i}", game="muushig", players=players, rules={}, limits={},
            status=MatchStatus.FINISHED, started_at=float(i), finished_at=float(i) + 0.5,
            tournament_id="t1", seed=f"0:{i}",
            result={"stars": [2, 1, 1, 1, 0], "sums": [3, 8, 8, 12, 20],
                    "ranks": [1, 2, 2, 4, 5], "final_scores": []},
            faults=[SeatFaults(timeouts=i)] + [SeatFaults()] * 4,
            latency_ms=[[1.0 + i], [], [2.0], [], [3.0]]))
    out.append(MatchRecord(id="aborted", game="muushig", players=FIVE, rules={}, limits={},
                           status=MatchStatus.ABORTED, started_at=9.0))
    return out


def test_json_round_trip(tmp_path):
    rows = compute_standings(matches(), bootstrap_samples=200)
    path = write_json(tmp_path / "r.json", rows, matches(), meta={"name": "cup"})
    back, doc = read_json(path)
    assert back == rows
    assert doc["meta"] == {"name": "cup"}
    assert [m["id"] for m in doc["matches"]] == ["m0", "m1", "m2", "m3"]  # aborted left out
    assert doc["matches"][2]["faults"][0]["timeouts"] == 2
    assert results_document(rows)["matches"] == []
    json.loads(path.read_text())  # plain JSON, no NaN


def test_csv_round_trip_and_match_lines(tmp_path):
    rows = compute_standings(matches(), bootstrap_samples=200)
    paths = export_results(tmp_path / "out", rows, matches(), stem="cup")
    assert [p.name for p in paths] == ["cup.json", "cup-standings.csv", "cup-matches.csv"]
    assert read_standings_csv(paths[1]) == rows
    with paths[2].open() as f:
        lines = list(csv.DictReader(f))
    assert len(lines) == 4 * 5
    assert lines[0] == {"match": "m0", "finished_at": "0.5", "seat": "0", "bot": "ann",
                        "rank": "1", "stars": "2", "score_sum": "3", "timeouts": "0",
                        "illegal": "0", "disconnects": "0"}


def test_csv_keeps_a_missing_latency_empty(tmp_path):
    m = matches()[0]
    bare = MatchRecord(**{**m.__dict__, "latency_ms": None})
    rows = compute_standings([bare])
    assert rows[0].median_latency_ms is None
    paths = export_results(tmp_path, rows, [bare])
    assert read_standings_csv(paths[1]) == rows


def test_read_json_refuses_unknown_formats(tmp_path):
    (tmp_path / "x.json").write_text('{"format": 99}')
    with pytest.raises(ValueError, match="unknown results format"):
        read_json(tmp_path / "x.json")


def test_render_table_is_aligned_plain_text():
    rows = compute_standings(matches(), bootstrap_samples=200)
    text = render_table(rows)
    lines = text.splitlines()
    assert lines[0].split()[:4] == ["#", "bot", "matches", "stars"]
    assert set(lines[1]) <= {"-", " "}
    assert len(lines) == 2 + len(rows)
    assert lines[2].split()[1] == rows[0].bot
    assert "\x1b" not in text  # no colour codes
    assert "-" in render_table(compute_standings([MatchRecord(
        **{**matches()[0].__dict__, "latency_ms": None})])).splitlines()[2].split()[-1]


def test_progress_without_a_terminal_prints_plain_lines_and_the_table():
    out = io.StringIO()
    now = [0.0]
    rows = compute_standings(matches(), bootstrap_samples=100)
    with TournamentProgress(4, title="cup", file=out, clock=lambda: now[0]) as progress:
        assert not progress.live_mode and progress.eta() is None
        for _ in range(2):
            now[0] += 30.0
            progress.advance(rows)
        assert progress.eta() == pytest.approx(60.0)
        progress.finish(rows)
    text = out.getvalue()
    assert "cup: 1/4 matches, ETA 1m30s" in text and "cup: 2/4 matches, ETA 1m00s" in text
    assert render_table(rows) in text


def test_progress_on_a_terminal_draws_a_live_bar():
    out = io.StringIO()
    rows = compute_standings(matches(), bootstrap_samples=100)
    with TournamentProgress(3, title="cup", file=out, force_terminal=True) as progress:
        assert progress.live_mode
        progress.advance(rows)
        progress.finish(rows)
    text = out.getvalue()
    assert "1/3" in text and "ann" in text


def test_format_eta():
    assert format_eta(None) == "?"
    assert format_eta(5) == "5s"
    assert format_eta(65) == "1m05s"
    assert format_eta(3725) == "1h02m"


def test_export_standings_for_the_command_line(tmp_path):
    from arena.storage.sqlite import SqliteStore
    from arena.tournament.export import export_standings

    store = SqliteStore(tmp_path / "a.db")
    try:
        for m in matches()[:4]:
            store.create_match(m)
            store.finish_match(m.id, result=m.result, reveal=[], faults=m.faults,
                               latency_ms=m.latency_ms, finished_at=m.finished_at)
        rows = compute_standings(store.finished_matches(tournament_id="t1"))
        files = export_standings(rows, tmp_path / "out" / "cup.json", store=store,
                                 tournament_id="t1")
        assert [f.name for f in files] == ["cup.json", "cup.csv", "cup-matches.csv"]
        back, doc = read_json(files[0])
        assert back == rows and len(doc["matches"]) == 4
        assert doc["meta"]["tournament_id"] == "t1"
        assert read_standings_csv(files[1]) == rows
        folder = export_standings(rows, tmp_path / "folder")
        assert [f.name for f in folder] == ["results.json", "results-standings.csv",
                                            "results-matches.csv"]
    finally:
        store.close()


def test_progress_display_follows_on_progress_callbacks():
    from arena.tournament.progress import ProgressDisplay

    out = io.StringIO()
    now = [0.0]
    display = ProgressDisplay(title="cup", file=out, clock=lambda: now[0])
    with display:
        display.update(2, 6)  # resumed: two slots were done before
        now[0] += 10
        display.update(3, 6)
        now[0] += 10
        display.update(4, 6)
    text = out.getvalue()
    assert "cup: 3/6 matches, ETA 30s" in text and "cup: 4/6 matches, ETA 20s" in text
