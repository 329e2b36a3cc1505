"""``arena match`` on its default in-memory store keeps its bots' output in
a temporary folder: whatever way the command ends, nothing of it is left
in the system's temporary directory."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from arena.cli import main


def test_a_played_match_leaves_no_folder(temp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["match", "--port", "0", "--seed", "1", "house:random"]) == 0
    assert list(temp.iterdir()) == []


def test_a_match_whose_port_is_taken_leaves_no_folder(temp: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["match", "--port", str(port), "me=python -c pass"]) != 0
    assert list(temp.iterdir()) == []
