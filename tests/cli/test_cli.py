"""The ``arena`` command as a user types it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from arena.auth import hash_token
from arena.cli import main
from arena.storage.sqlite import SqliteStore

ROOT = Path(__file__).resolve().parents[2]


def test_match_prints_a_result_table(capsys):
    assert main(["match", "--port", "0", "--seed", "7", "house:random", "house:heuristic"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("match ")
    assert out[1].split() == ["rank", "seat", "bot", "stars", "r1", "r2", "r3", "r4", "r5", "sum"]
    rows = [line.split() for line in out[3:]]
    assert len(rows) == 5
    assert [int(r[0]) for r in rows] == sorted(int(r[0]) for r in rows)
    assert sum(r[3].count("★") for r in rows) == 5


def test_match_with_a_bot_the_arena_starts(capsys):
    bot = f"me=python {ROOT / 'sample_bots/python_random/bot.py'}"
    assert main(["match", "--port", "0", "--seed", "1", bot]) == 0
    assert " me " in capsys.readouterr().out


def test_match_rule_options_change_the_table(capsys):
    assert main(["match", "--port", "0", "--rule", "players=4", "--rule", "max_hands=2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 3 + 4  # four seats, four rounds
    assert main(["match", "--port", "0", "--rule", "bogus=1"]) == 2
    assert "bogus" in capsys.readouterr().err


def test_bots_add_prints_the_token_once_and_stores_its_hash(tmp_path, capsys):
    db = str(tmp_path / "a.db")
    assert main(["bots", "add", "alice", "--db", db]) == 0
    token = capsys.readouterr().out.strip()
    assert len(token) >= 24
    store = SqliteStore(db)
    assert store.get_bot("alice").token_hash == hash_token(token)
    store.close()
    assert main(["bots", "add", "alice", "--db", db]) == 1
    assert "exists already" in capsys.readouterr().err
    assert main(["bots", "rotate", "alice", "--db", db]) == 0
    new = capsys.readouterr().out.strip()
    assert new != token
    assert main(["bots", "list", "--db", db]) == 0
    assert capsys.readouterr().out.split() == ["alice", "remote"]
    assert main(["bots", "remove", "alice", "--db", db]) == 0
    assert main(["bots", "remove", "nobody", "--db", db]) == 1


def test_logs_go_to_stderr_as_json_lines(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "arena.cli", "match", "--port", "0",
                           "--seed", "3"], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0
    import json

    lines = [json.loads(line) for line in proc.stderr.splitlines() if line.startswith("{")]
    started = [line for line in lines if line["event"] == "match_started"]
    assert started and "match" in started[0] and started[0]["level"] == "info"
    assert proc.stdout.startswith("match ")
