"""The outside benchmark runs end to end at a tiny size, and its /proc
readings count what they say they count (the figures themselves are not
checked: they depend on the machine)."""

import importlib.util
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads Linux's /proc")


def load(name: str):
    sys.path.insert(0, str(BENCH))
    try:
        spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(BENCH))


def test_tree_cpu_counts_a_childs_work():
    proctree = load("proctree")
    busy = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass\ntime.sleep(30)"
    parent = subprocess.Popen([sys.executable, "-c",
                               f"import subprocess, sys; subprocess.run([sys.executable, '-c', {busy!r}])"])
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and proctree.tree_cpu_s(parent.pid) < 0.3:
            time.sleep(0.05)
        assert len(proctree.tree(parent.pid)) == 2
        assert proctree.tree_cpu_s(parent.pid) >= 0.3
        assert proctree.tree_rss_bytes(parent.pid) > proctree.tree_rss_bytes(proctree.tree(parent.pid)[1])
    finally:
        for pid in reversed(proctree.tree(parent.pid)):
            subprocess.run(["kill", str(pid)], check=False)
        parent.wait()


def test_bots_spread_over_loopback_addresses_within_the_per_address_cap():
    spread = load("spread_bots")
    addresses = [spread.source_address(i) for i in range(1000)]
    assert all(a.startswith("127.") for a in addresses)
    assert max(addresses.count(a) for a in set(addresses)) <= 50
    assert spread.source_address(20_000) not in addresses


def test_two_tables_from_outside_give_every_figure_and_its_baseline(capsys):
    bench = load("outside_bench")
    assert bench.main(["--tables", "2", "--matches", "1", "--baseline-trips", "3000",
                       "--one-table-matches", "1", "--floor-matches", "1", "--json"]) == 0
    fig = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    arena, bare = fig["arena"], fig["bare"]
    assert arena["connections"] == 10 and arena["matches_finished"] == 2
    assert arena["decisions"] > 200 and arena["timeouts"] == 0
    assert arena["server_us"] > 0 and arena["load_us"] > 0 and arena["p99_ms"] >= arena["p50_ms"]
    assert bare["trips"] == 2 * 3000 and bare["server_us"] > 0
    assert fig["one_table"]["cpu_us"] > 0 and fig["one_table"]["bare_cpu_us"] > 0
    # The session alone costs more than the engine's move within it.
    assert fig["floor"]["session_us"] > fig["floor"]["engine_wire_us"] > 0
    bench.print_table(fig)
    table = capsys.readouterr().out
    for row in ("server CPU µs per decision, 2 tables / 10 connections", "turn latency p99 ms",
                "RSS KB per table", "server-caused timeouts", "one table, server_bench",
                "the match session alone, no I/O", "floor: the session alone + the bare round trip"):
        assert row in table
