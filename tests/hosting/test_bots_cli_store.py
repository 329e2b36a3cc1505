"""``arena bots submit | versions | build-log`` change or read a store that
exists: a ``--db`` naming none is refused, and nothing is created there (a
typo must not leave an empty store behind, nor add tables to a file or a
database that is not an arena's)."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.cli import main
from arena.storage.postgres import has_arena_schema

COMMANDS = [["submit", "mybot", "BOT"], ["versions", "mybot"], ["build-log", "mybot"]]


def _run(command: list[str], db: str, bot: Path) -> int:
    return main(["bots", *[str(bot) if a == "BOT" else a for a in command], "--db", db])


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
@pytest.mark.parametrize("spelling", ["path", "url"])
def test_a_missing_sqlite_store_is_refused_and_not_created(
        command: list[str], spelling: str, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "bot.py").write_text("print('hi')\n")
    missing = tmp_path / "typo.db"
    db = str(missing) if spelling == "path" else f"sqlite:///{missing}"
    assert _run(command, db, tmp_path / "bot.py") == 2
    assert "no arena store" in capsys.readouterr().err
    assert not missing.exists() and not (tmp_path / "hosted").exists()


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_a_file_that_is_no_arena_store_is_left_as_it_was(
        command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "bot.py").write_text("print('hi')\n")
    other = tmp_path / "notes.db"
    other.write_bytes(b"")  # someone else's (empty) file
    assert _run(command, str(other), tmp_path / "bot.py") == 2
    assert "no arena store" in capsys.readouterr().err
    assert other.read_bytes() == b""


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_an_empty_database_gets_no_arena_tables(
        command: list[str], pg_url: str, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "bot.py").write_text("print('hi')\n")
    assert _run(command, pg_url, tmp_path / "bot.py") == 2
    assert "no arena store" in capsys.readouterr().err
    assert not has_arena_schema(pg_url)
