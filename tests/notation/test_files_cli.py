"""The commands around match files, run as a user runs them: a local match
written with --output, checked with arena replay, shown by arena view in
chromium with its decks verified there; and arena export --dataset."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from arena.storage import open_store
from tests.browser import launch, needs_chromium

from .matches import play, store_match

ENV = {**os.environ, "ARENA_PURE_PYTHON": "1"}
WAIT_S = 60


def arena(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], capture_output=True,
                          text=True, env=ENV, timeout=WAIT_S * 2)


@pytest.fixture(scope="module")
def notation_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("files") / "match.txt"
    done = arena("match", "--rule", "players=3", "--rule", "max_hands=4", "--seed", "x",
                 "--output", str(path))
    assert done.returncode == 0, done.stderr
    return path


def test_a_local_match_written_with_output_replays_as_valid(notation_file: Path) -> None:
    done = arena("replay", str(notation_file))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("valid: muushig match ")


def test_replay_names_the_first_bad_line_of_a_file(notation_file: Path, tmp_path: Path) -> None:
    lines = notation_file.read_text().split("\n")
    i = next(n for n, line in enumerate(lines) if line.startswith("trick "))
    lines[i] = lines[i].replace(" winner ", " winner 9 x ", 1)
    bad = tmp_path / "bad.txt"
    bad.write_text("\n".join(lines))
    done = arena("replay", str(bad))
    assert done.returncode == 1
    assert f"line {i + 1}:" in done.stderr


def test_output_as_json_lines_is_a_dataset_record(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    done = arena("match", "--game", "thirteen", "--rule", "deals=2", "--output", str(path))
    assert done.returncode == 0, done.stderr
    record = json.loads(path.read_text())
    assert record["schema"] == "arena-match/1" and record["game"] == "thirteen"
    assert len(record["reveal"]) == 2


def test_export_dataset_writes_public_matches_only(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    store = open_store(db)
    try:
        for i in range(4):
            store_match(store, play("thirteen", {"players": 2, "deals": 1}, i), match_id=f"m{i}")
    finally:
        store.close()
    done = arena("export", "--dataset", str(tmp_path / "out"), "--db", str(db))
    assert done.returncode == 0, done.stderr
    with gzip.open(tmp_path / "out" / "thirteen.jsonl.gz", "rt") as f:
        ids = sorted(json.loads(line)["id"] for line in f)
    assert ids == ["m0", "m1", "m2", "m3"]
    assert json.loads((tmp_path / "out" / "schema.json").read_text())["schema"] == "arena-match/1"


@needs_chromium
async def test_arena_view_shows_the_file_with_its_decks_verified(notation_file: Path) -> None:
    from playwright.async_api import async_playwright


    view = subprocess.Popen([sys.executable, "-m", "arena.cli", "view", str(notation_file)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            env=ENV)
    try:
        assert view.stdout is not None
        url = view.stdout.readline().strip()  # printed once it listens
        assert url.startswith("http://127.0.0.1:"), url
        deals = sum(1 for line in notation_file.read_text().split("\n")
                    if line.startswith("Commit "))
        async with async_playwright() as p:
            browser = await launch(p)
            try:
                page = await browser.new_page()
                page.set_default_timeout(WAIT_S * 1000)
                await page.goto(url)
                await page.wait_for_selector(f"#replay[data-verified='{deals}/{deals}']")
                summary = await page.locator(".verify summary").text_content()
                assert summary == f"{deals} of {deals} deals verified in this browser"
            finally:
                await browser.close()
    finally:
        view.terminate()
        view.wait(timeout=WAIT_S)
