"""What ``arena tournament`` tells the organiser: help that names the files
it writes, a standings address that works, and where the results stay."""

from __future__ import annotations

import os
import pty
import re
import select
import signal
import subprocess
import sys
import time
import urllib.request

from arena.tournament.export import export_standings
from tests.tournament_run.helpers import ROOT, sample_entrant, write_config


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "arena.cli", *args]


def test_export_help_names_exactly_the_files_export_writes(tmp_path):
    help_text = subprocess.run(cli("tournament", "--help"), capture_output=True, text=True,
                               cwd=ROOT, timeout=60).stdout
    help_text = re.sub(r"-\s+", "-", " ".join(help_text.split()))  # undo wrapping at hyphens
    folder = {p.name for p in export_standings([], tmp_path / "out")}
    named = {p.name for p in export_standings([], tmp_path / "cup.json")}
    for name in folder:
        assert name in help_text
    assert {"cup.json", "cup.csv", "cup-matches.csv"} == named
    mentioned = set(re.findall(r"[\w./-]+\.(?:json|csv)", help_text))
    assert {m.rsplit("/", 1)[-1] for m in mentioned} <= folder | named


def test_without_a_terminal_it_ends_and_prints_how_to_serve_the_results(tmp_path):
    path = write_config(tmp_path, sample_entrant("r"), extra="duplicate = false")
    db = tmp_path / "a.db"
    proc = subprocess.run(cli("tournament", str(path), "--db", str(db), "--port", "0",
                              "--http-port", "0"), capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    tail = proc.stdout.strip().splitlines()[-1]
    assert f"arena serve --db {db}" in tail
    assert re.search(r"/tournaments/[\w-]+$", tail)


def test_on_a_terminal_it_keeps_serving_the_tournament_page_until_ctrl_c(tmp_path):
    path = write_config(tmp_path, sample_entrant("r"), extra="duplicate = false")
    master, slave = pty.openpty()
    proc = subprocess.Popen(cli("tournament", str(path), "--db", str(tmp_path / "a.db"),
                                "--port", "0", "--http-port", "0"),
                            stdin=subprocess.DEVNULL, stdout=slave, stderr=subprocess.DEVNULL,
                            cwd=ROOT)
    os.close(slave)
    seen = b""
    try:
        deadline = time.monotonic() + 90
        url = None
        while time.monotonic() < deadline and url is None:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    seen += os.read(master, 65536)
                except OSError:
                    break
            found = re.search(rb"serving the results on (http://\S+/tournaments/[\w-]+)", seen)
            url = found.group(1).decode() if found else None
        assert url, seen.decode(errors="replace")[-2000:]
        time.sleep(1.0)  # it must still be up a moment later
        assert proc.poll() is None
        with urllib.request.urlopen(url, timeout=10) as response:
            assert response.status == 200
        proc.send_signal(signal.SIGINT)
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)


def test_until_separated_on_the_command_line_adds_capped_reserve_deck_sets(tmp_path):
    from arena.cli import _parser
    from arena.storage.sqlite import SqliteStore
    from arena.tournament.command import _load

    path = write_config(tmp_path, sample_entrant("r"))
    args = _parser().parse_args(["tournament", str(path), "--db", str(tmp_path / "a.db"),
                                 "--until-separated", "--max-extra-matches", "12"])
    store = SqliteStore(tmp_path / "a.db")
    config, record = _load(args, store)
    assert config.schedule.until_separated and config.schedule.max_extra_matches == 12
    schedule = store.get_schedule(record.id)
    assert len(schedule) == 5 + 10  # two whole deck sets of five rotations fit in 12
    assert sum(1 for s in schedule if s.extra.get("reserve")) == 10
    store.close()
