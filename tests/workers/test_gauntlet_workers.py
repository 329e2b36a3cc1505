"""``arena tournament FILE --workers 2`` on a gauntlet: the worker processes
share its deck sets (each added once, each slot played once), it stops
where the rule stops, and the command prints and exports the result."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from arena.storage.base import MatchStatus, TournamentStatus
from arena.storage.sqlite import SqliteStore
from arena.tournament.config import load_config
from arena.tournament.gauntlet_play import decided, sets_of
from arena.tournament.verify import verify_tournament
from tests.tournament_run.helpers import ROOT, sample_entrant, write_config

GAUNTLET = ('[schedule]\nkind = "gauntlet"\nchallenger = "champ"\nmax_sets = 6\n'
            'alpha = 0.2\neffect = 0.45\n[rules]\nplayers = 2\nmax_hands = 2\n')


@pytest.mark.timeout(240)
def test_a_gauntlet_on_two_workers_stops_by_its_rule_and_exports_it(tmp_path):
    path = write_config(tmp_path, sample_entrant("champ", "python_heuristic")
                        + sample_entrant("r1") + sample_entrant("r2"), extra=GAUNTLET,
                        name="gauntlet on workers")
    db = tmp_path / "arena.db"
    out = subprocess.run([sys.executable, "-m", "arena.cli", "tournament", str(path), "--db",
                          str(db), "--port", "0", "--no-http", "--no-keep-serving",
                          "--workers", "2", "--export", str(tmp_path / "out.json")],
                         capture_output=True, text=True, timeout=220, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "gauntlet: champ against r1, r2: stopped" in out.stdout
    assert "  vs r1: " in out.stdout and "  vs r2: " in out.stdout
    store = SqliteStore(db)
    try:
        [record] = store.list_tournaments()
        assert record.status is TournamentStatus.FINISHED
        schedule = store.get_schedule(record.id)
        sets = sets_of(schedule)
        assert sorted(sets) == list(range(1, len(sets) + 1))
        assert decided(store, load_config(path), schedule)
        finished = store.list_matches(tournament_id=record.id, status=MatchStatus.FINISHED,
                                      limit=1000)
        assert sorted(m.id for m in finished) == sorted(s.match_id for s in schedule)
        assert verify_tournament(store, record.id).ok
        gauntlet = json.loads((tmp_path / "out.json").read_text())["meta"]["gauntlet"]
        assert gauntlet["challenger"] == "champ" and gauntlet["deck_sets"] == len(sets)
        assert gauntlet["verdict"] in ("better", "worse", "even", "capped")
        assert [row["opponent"] for row in gauntlet["opponents"]] == ["r1", "r2"]
    finally:
        store.close()
