"""Every user mistake gets one line saying what is wrong and what to do,
and exit code 2; a traceback only with ``--debug``."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.cli import main
from arena.tournament.config import ConfigError


def one_line_error(capsys) -> str:
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip() and not line.startswith("{")]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


@pytest.fixture
def server_args(tmp_path):
    return ["--port", "0", "--no-http", "--db", str(tmp_path / "t.db")]


def test_a_missing_tournament_file(capsys, server_args, tmp_path):
    assert main(["tournament", str(tmp_path / "nope.toml"), *server_args]) == 2
    line = one_line_error(capsys)
    assert "nope.toml" in line and "No such file" in line


def test_malformed_toml(capsys, server_args, tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text('name = "x"\n[[entrant\n')
    assert main(["tournament", str(path), *server_args]) == 2
    line = one_line_error(capsys)
    assert "bad.toml" in line and "not valid TOML" in line and "line 2" in line


def test_a_bad_config_value_names_the_file_and_the_key(capsys, server_args, tmp_path):
    path = tmp_path / "val.toml"
    path.write_text('name = "x"\nparallel = "lots"\n[[entrant]]\nname = "a"\ncommand = ["python", "b.py"]\n')
    assert main(["tournament", str(path), *server_args]) == 2
    line = one_line_error(capsys)
    assert "val.toml" in line and "parallel" in line and "integer" in line


def test_a_bot_command_that_does_not_exist(capsys):
    assert main(["match", "--port", "0", "me=no-such-bot-command --fast"]) == 2
    line = one_line_error(capsys)
    assert "'me'" in line and "no-such-bot-command" in line and "not found" in line


def test_an_unknown_house_bot(capsys):
    assert main(["match", "--port", "0", "house:bogus"]) == 2
    line = one_line_error(capsys)
    assert "bogus" in line and "heuristic" in line  # names the kinds there are


def test_debug_shows_the_traceback(server_args, tmp_path):
    with pytest.raises(ConfigError):
        main(["--debug", "tournament", str(tmp_path / "nope.toml"), *server_args])


def test_debug_may_also_follow_the_subcommand(server_args, tmp_path):
    with pytest.raises(ConfigError):
        main(["tournament", str(tmp_path / "nope.toml"), *server_args, "--debug"])


def test_a_bad_player_spec_is_a_usage_error(capsys):
    assert main(["match", "--port", "0", "justaword"]) == 2
    assert "NAME=COMMAND" in one_line_error(capsys)


def test_a_bad_rule_option(capsys):
    assert main(["match", "--port", "0", "--rule", "max_hands"]) == 2
    assert "KEY=VALUE" in one_line_error(capsys)


# -- bots ----------------------------------------------------------------------------

def test_bots_add_refuses_a_name_the_api_refuses(capsys, tmp_path):
    db = tmp_path / "a.db"
    assert main(["bots", "add", "bad name", "--db", str(db)]) == 2
    line = one_line_error(capsys)
    assert "'bad name'" in line and "letters, digits" in line
    assert capsys.readouterr().out == ""  # no token printed


def test_bots_list_does_not_create_a_store(capsys, tmp_path):
    db = tmp_path / "typo.db"
    assert main(["bots", "list", "--db", str(db)]) == 2
    line = one_line_error(capsys)
    assert "typo.db" in line and "arena bots add" in line
    assert not db.exists()


@pytest.mark.parametrize("command", ["add", "rotate", "remove"])
def test_bots_commands_open_existing_stores_only(capsys, tmp_path, command):
    db = tmp_path / "typo.db"
    code = main(["bots", command, "x", "--db", str(db)])
    if command == "add":
        # Registering the first bot is how a store for registered mode is made.
        assert code == 0 and db.exists()
    else:
        assert code == 2 and not db.exists()
        assert "typo.db" in one_line_error(capsys)


def test_a_tournament_entrant_whose_command_does_not_exist(capsys, server_args, tmp_path):
    path = tmp_path / "cup.toml"
    path.write_text('name = "cup"\n[[entrant]]\nname = "a"\ncommand = ["no-such-bot-command-x"]\n')
    assert main(["tournament", str(path), *server_args]) == 2
    line = one_line_error(capsys)
    assert "no-such-bot-command-x" in line


def test_a_tournament_entrant_whose_script_does_not_exist(capsys, server_args, tmp_path):
    # Caught before the first match, not after minutes of restarts.
    path = tmp_path / "cup.toml"
    path.write_text('name = "cup"\n[[entrant]]\nname = "a"\ncommand = ["python", "nosuch.py"]\n'
                    '[[entrant]]\nname = "b"\ncommand = ["python", "-u", "nosuch2.py", "--fast"]\n')
    assert main(["tournament", str(path), *server_args]) == 2
    err = capsys.readouterr().err
    assert "'a'" in err and "'nosuch.py'" in err and "does not exist" in err
    assert "'b'" in err and "'nosuch2.py'" in err
    assert "Traceback" not in err


def test_a_match_player_whose_script_does_not_exist(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["match", "me=python nosuch.py"]) == 2
    line = one_line_error(capsys)
    assert "'me'" in line and "'nosuch.py'" in line and "does not exist" in line


def test_a_tournament_file_mistake_points_to_its_reference(capsys, server_args, tmp_path):
    path = tmp_path / "val.toml"
    path.write_text('name = "x"\nparallel = "lots"\n[[entrant]]\nname = "a"\ncommand = ["python", "b.py"]\n')
    assert main(["tournament", str(path), *server_args]) == 2
    line = one_line_error(capsys)
    reference = line.rsplit("see ", 1)[1].split()[-1].rstrip(")")
    assert reference == "docs/tournaments.md"
    root = Path(__file__).resolve().parents[2]
    assert "[[entrant]]" in (root / reference).read_text()
