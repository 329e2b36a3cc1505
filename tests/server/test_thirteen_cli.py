"""``arena match --game thirteen``: the game's own seats, house bots and
result columns (from its descriptor), and a match ``arena verify`` accepts."""

from __future__ import annotations

from pathlib import Path

from arena.cli import main
from arena.games import get_game
from arena.storage.sqlite import SqliteStore

ROOT = Path(__file__).resolve().parents[2]
BOT = f"a=python {ROOT / 'sample_bots' / 'python_thirteen' / 'bot.py'}"


def test_match_of_thirteen_prints_the_games_result_columns(capsys, tmp_path):
    db = tmp_path / "m.db"
    assert main(["match", "--game", "thirteen", "--port", "0", "--db", str(db),
                 "--rule", "deals=2", BOT, "house:strong", "house:random"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("match ")
    labels = [label for _, label in get_game("thirteen").extra["web"]["result_columns"]]
    assert out[1].split() == ["seat", "bot", *labels]
    rows = [line.split() for line in out[3:]]
    assert len(rows) == 4  # the missing seat got a house bot of the game
    assert {r[1] for r in rows} >= {"a", "house-strong-2", "house-random-3"}
    assert [int(r[2]) for r in rows] == sorted(int(r[2]) for r in rows)
    assert sum(int(r[3]) for r in rows) == 0
    store = SqliteStore(db)
    try:
        (match,) = store.list_matches()
        assert match.game == "thirteen" and match.rules["deals"] == 2
    finally:
        store.close()
    assert main(["verify", "--match", match.id, "--db", str(db)]) == 0


def test_match_without_game_still_plays_muushig(capsys):
    assert main(["match", "--port", "0", "--seed", "3", "house:random"]) == 0
    assert capsys.readouterr().out.splitlines()[1].split()[:4] == ["rank", "seat", "bot", "stars"]
