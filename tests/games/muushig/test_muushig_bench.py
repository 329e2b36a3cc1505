"""The engine benchmark still runs (tiny sizes; the figures are not checked)."""

import importlib.util
from pathlib import Path

BENCH = Path(__file__).resolve().parents[3] / "bench" / "engine_bench.py"


def test_engine_bench_runs_and_reports_every_line(capsys):
    spec = importlib.util.spec_from_file_location("engine_bench", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main(["--matches", "2", "--baseline-matches", "1", "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    assert out.count("matches/s") == 3 and "fast API / reference" in out
    assert module.fast_api(range(3)) > 0 and module.reference(range(1)) > 0
