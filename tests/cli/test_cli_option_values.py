"""Every option value is checked where it is parsed: a bad one is one line
naming the option and what it takes, exit code 2, and nothing starts."""

from __future__ import annotations

import asyncio

import pytest

from arena.cli import main

MISSING = "{missing}"  # a folder that does not exist, under the test's temporary folder

# (command line, words the one line must hold)
MISTAKES = [
    (["match", "--decision-ms", "-5"], ["--decision-ms", "at least 1 ms", "-5"]),
    (["match", "--decision-ms", "0"], ["--decision-ms", "at least 1 ms"]),
    (["match", "--bank-ms", "-100"], ["--bank-ms", "at least 0 ms", "-100"]),
    (["match", "--autopilot-after", "0"], ["--autopilot-after", "at least 1"]),
    (["match", "--port", "99999"], ["--port", "0 (any free one) to 65535", "99999"]),
    (["match", "--port", "seven"], ["--port", "whole number", "'seven'"]),
    (["match", "--http-port", "-1"], ["--http-port", "65535"]),
    (["match", "--db", MISSING], ["--db", "no folder", "no-such-folder"]),
    (["serve", "--house-wait", "-1"], ["--house-wait", "0 or more seconds"]),
    (["serve", "--house-wait", "nan"], ["--house-wait", "0 or more seconds"]),
    (["serve", "--house-bot", "nosuch"], ["--house-bot", "'nosuch'", "heuristic", "strong"]),
    (["serve", "--port", "70000"], ["--port", "65535"]),
    (["serve", "--db", MISSING], ["--db", "no folder"]),
    (["serve", "--workers", "0"], ["--workers", "between 1 and"]),
    (["serve", "--ladder-interval", "0"], ["--ladder-interval", "above 0 seconds"]),
    (["serve", "--ladder-tables", "0"], ["--ladder-tables", "at least 1"]),
    (["tournament", "examples/demo.toml", "--lease", "-3"], ["--lease", "above 0 seconds"]),
    (["tournament", "examples/demo.toml", "--max-extra-matches", "0"], ["--max-extra-matches", "at least 1"]),
    (["tournament", "examples/demo.toml", "--workers", "0"], ["--workers", "between 1 and"]),
    (["tournament", "examples/demo.toml", "--decision-ms", "-1"], ["--decision-ms", "at least 1 ms"]),
    (["bots", "add", "x", "--db", MISSING], ["--db", "no folder"]),
    (["bots", "build-log", "x", "--version", "0"], ["--version", "at least 1"]),
    (["check-bot", "--port", "99999", "--", "true"], ["--port", "65535"]),
    (["check-bot", "--timeout", "-1", "--", "true"], ["--timeout", "above 0 seconds"]),
    (["check-bot", "--deadline-ms", "0", "--", "true"], ["--deadline-ms", "at least 1 ms"]),
    (["match", "--sed", "1"], ["unrecognized arguments: --sed", "arena match --help"]),
]


@pytest.mark.parametrize(("argv", "words"), MISTAKES, ids=[" ".join(a) for a, _ in MISTAKES])
def test_a_bad_option_value_is_one_line_and_exit_2(argv, words, capsys, monkeypatch, tmp_path):
    missing = tmp_path / "no-such-folder" / "sub" / "x.db"
    argv = [str(missing) if arg == MISSING else arg for arg in argv]
    def started(*args, **kwargs):
        for arg in args:
            if asyncio.iscoroutine(arg):
                arg.close()
        raise AssertionError("the command started although an option was wrong")

    monkeypatch.setattr(asyncio, "run", started)
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2, err
    assert len(lines) == 1, err
    for word in words:
        assert word in lines[0], lines[0]
    assert not missing.parent.parent.exists()  # no folder made for a mistyped --db
