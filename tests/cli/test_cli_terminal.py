"""What the tournament shows on a terminal: logs never tear the progress
bar, the ETA says it is estimating, the final table fits the width."""

from __future__ import annotations

import io
import json

import structlog

from arena.logs import configure_logging, divert_logs
from arena.tournament.progress import TournamentProgress, render_table
from arena.tournament.standings import compute_standings

from tests.tournament.test_export import matches


def test_the_eta_says_estimating_before_the_first_match():
    out = io.StringIO()
    now = [0.0]
    with TournamentProgress(4, title="cup", file=out, force_terminal=True, clock=lambda: now[0]) as progress:
        progress._live.refresh()
        assert "-:--:--" not in out.getvalue()
        assert "estimating" in out.getvalue()
        now[0] += 30
        progress.advance()
        progress._live.refresh()
    assert "0:01:30" in out.getvalue()


def test_the_final_table_fits_80_columns():
    rows = compute_standings(matches(), bootstrap_samples=100)
    wide = render_table(rows)
    assert max(len(line) for line in wide.splitlines()) > 80  # every column, when there is room
    text = render_table(rows, width=80)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 80, text
    assert lines[0].split()[:4] == ["#", "bot", "matches", "stars"]
    assert "rating" in lines[0]
    assert "hidden to fit 80 columns" in text  # it says which columns were left out


def test_info_logs_go_to_a_file_while_a_bar_is_shown(tmp_path, capsys):
    configure_logging("info", json=True)
    log = structlog.get_logger("t")
    path = tmp_path / "arena.log"
    with divert_logs(path):
        log.info("quiet_line", n=1)
        log.warning("loud_line", n=2)
    log.info("after_line")
    err = capsys.readouterr().err
    assert "quiet_line" not in err
    assert "loud_line" in err and "after_line" in err
    written = [json.loads(line) for line in path.read_text().splitlines()]
    assert [w["event"] for w in written] == ["quiet_line", "loud_line"]


def test_a_tournament_on_a_terminal_logs_next_to_its_store(tmp_path):
    from arena.cli import _parser, tournament_log_file

    (tmp_path / "data").mkdir()
    args = _parser().parse_args(["tournament", "cup.toml", "--db", str(tmp_path / "data" / "cup.db")])
    assert tournament_log_file(args, terminal=True) == tmp_path / "data" / "cup.log"
    assert tournament_log_file(args, terminal=False) is None
    debug = _parser().parse_args(["--log-level", "debug", "tournament", "cup.toml"])
    assert tournament_log_file(debug, terminal=True) is None
