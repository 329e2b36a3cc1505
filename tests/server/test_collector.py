"""A serving process sets its garbage collector for many tables and shows
what the collector cost in ``/api/health``."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import urllib.request
from pathlib import Path

from arena.collector import SERVING_THRESHOLDS, CollectorWatch

ROOT = Path(__file__).resolve().parents[2]


def test_arena_serve_freezes_its_startup_heap_and_raises_the_thresholds(tmp_path):
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "serve", "--any-token", "--port", "0",
         "--http-port", "0", "--db", str(tmp_path / "a.db"), "--log-level", "warning"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=ROOT)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "web on http://" in line, line
        url = line.split("web on ")[1].strip().rstrip("/")
        with urllib.request.urlopen(f"{url}/api/health", timeout=10) as response:
            collector = json.loads(response.read())["collector"]
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    assert collector["thresholds"] == list(SERVING_THRESHOLDS)
    # The interpreter's and the arena's own objects: tens of thousands.
    assert collector["frozen_objects"] > 10_000
    assert collector["watched"] is True
    assert [set(g) for g in collector["generations"]] == \
        [{"collections", "pause_total_ms", "pause_longest_ms"}] * 3


def test_the_watch_records_each_collection_by_generation():
    watch = CollectorWatch()
    watch.start()
    try:
        gc.collect(0)
        gc.collect(2)
        gc.collect(2)
    finally:
        watch.stop()
    young, middle, old = watch.snapshot()["generations"]
    # Other collections may run meanwhile (young ones), never fewer.
    assert young["collections"] >= 1 and old["collections"] >= 2
    assert old["pause_longest_ms"] > 0
    assert old["pause_total_ms"] >= old["pause_longest_ms"]


def test_a_stopped_watch_records_nothing_more_and_leaves_the_callbacks():
    watch = CollectorWatch()
    watch.start()
    watch.stop()
    assert watch._callback not in gc.callbacks
    gc.collect()
    assert all(g["collections"] == 0 for g in watch.snapshot()["generations"])
    watch.stop()  # twice is harmless


def test_outside_serve_the_collector_is_left_as_python_sets_it():
    # The tests' own process (and any program importing the arena) keeps
    # CPython's settings: only a serving process's entry tunes them.
    snapshot = CollectorWatch().snapshot()
    assert snapshot["thresholds"] == list(gc.get_threshold())
    assert tuple(gc.get_threshold()) != SERVING_THRESHOLDS
