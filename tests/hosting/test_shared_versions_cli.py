"""Versions live in the store: every node (and every shell) of one database
sees the same versions, numbered once per bot.

These drive the ``arena bots`` commands from two different working folders
on one PostgreSQL database, as two nodes' operators would."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from arena.cli import main
from arena.storage import open_store

BOT = b"print('hello')\n"


def _in(folder: Path, argv: list[str]) -> int:
    """Run ``arena ARGV`` with ``folder`` as the working folder."""
    folder.mkdir(parents=True, exist_ok=True)
    before = Path.cwd()
    os.chdir(folder)
    try:
        return main(argv)
    finally:
        os.chdir(before)


@pytest.fixture
def shared(pg_url: str, tmp_path: Path) -> str:
    store = open_store(pg_url)
    try:
        store.add_bot("shared-bot", "hash-of-a-token")
    finally:
        store.close()
    (tmp_path / "bot.py").write_bytes(BOT)
    return pg_url


def test_a_version_submitted_from_one_folder_is_seen_from_another(
        shared: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    upload = str(tmp_path / "bot.py")
    assert _in(tmp_path / "node-a", ["bots", "submit", "shared-bot", upload,
                                     "--db", shared, "--no-build"]) == 0
    capsys.readouterr()
    assert _in(tmp_path / "node-b", ["bots", "versions", "shared-bot", "--db", shared]) == 0
    listed = capsys.readouterr().out
    assert listed.startswith("v1\t"), listed


def test_submits_from_two_folders_get_two_numbers(
        shared: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    upload = str(tmp_path / "bot.py")
    for node in ("node-a", "node-b"):
        assert _in(tmp_path / node, ["bots", "submit", "shared-bot", upload,
                                     "--db", shared, "--no-build"]) == 0
    said = capsys.readouterr().out.splitlines()
    assert said == ["shared-bot v1: building", "shared-bot v2: building"]


def test_submit_to_a_database_server_leaves_nothing_in_the_working_folder(
        shared: str, tmp_path: Path) -> None:
    folder = tmp_path / "shell"
    assert _in(folder, ["bots", "submit", "shared-bot", str(tmp_path / "bot.py"),
                        "--db", shared, "--no-build"]) == 0
    assert list(folder.iterdir()) == []
