"""A bot command whose interpreter's script is missing is refused before
anything starts; commands that run no script file are left alone."""

from __future__ import annotations

import sys

import pytest

from arena.server.local_bots import command_problem, script_of


@pytest.mark.parametrize(("command", "script"), [
    (["python", "bot.py"], "bot.py"),
    (["python3", "-u", "bot.py", "--fast"], "bot.py"),
    (["python", "-W", "ignore", "bot.py"], "bot.py"),
    ([sys.executable, "bots/x.py"], "bots/x.py"),
    (["python", "-m", "mybot"], None),
    (["python", "-c", "print(1)"], None),
    (["node", "bot.js"], "bot.js"),
    (["node", "-r", "ts-node/register", "bot.ts"], "bot.ts"),
    (["node", "-e", "1"], None),
    (["./bot"], None),
    (["java", "-jar", "bot.jar"], None),
])
def test_the_script_an_interpreter_runs(command, script):
    assert script_of(command) == script


def test_a_missing_script_is_a_problem_named_in_one_line(tmp_path):
    problem = command_problem("a", ["python", "nosuch.py"], tmp_path)
    assert problem is not None and "'nosuch.py'" in problem and str(tmp_path) in problem
    assert "\n" not in problem


def test_an_existing_script_is_no_problem(tmp_path):
    (tmp_path / "bot.py").write_text("")
    assert command_problem("a", ["python", "bot.py"], tmp_path) is None
    assert command_problem("a", ["python", "-m", "protocol.sdk"], tmp_path) is None
