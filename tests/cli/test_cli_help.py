"""``--help`` explains every option and shows its default; a mistake in a
subcommand prints that subcommand's usage."""

from __future__ import annotations

import argparse

import pytest

from arena.cli import _parser, main

SUBCOMMANDS = ["serve", "match", "tournament", "bots", "check-bot"]


def help_of(capsys, *argv: str) -> str:
    with pytest.raises(SystemExit) as exit_info:
        main([*argv, "--help"])
    assert exit_info.value.code == 0
    return capsys.readouterr().out


def all_parsers() -> list[argparse.ArgumentParser]:
    found, todo = [], [_parser()]
    while todo:
        parser = todo.pop()
        found.append(parser)
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                todo.extend(action.choices.values())
    return found


def test_the_description_is_plain_text(capsys):
    out = help_of(capsys)
    assert "``" not in out
    assert out.startswith("usage: arena")


def test_every_option_has_a_help_text():
    missing = [f"{parser.prog} {action.option_strings or action.dest}"
               for parser in all_parsers() for action in parser._actions
               if not action.help and not isinstance(action, argparse._SubParsersAction)]
    assert missing == []


def test_help_shows_the_defaults(capsys):
    out = help_of(capsys, "serve")
    assert "default: 7000" in out
    assert "default: 8080" in out
    assert "default: 1000" in out  # --decision-ms


def test_open_mode_does_not_read_like_a_browser(capsys):
    out = help_of(capsys, "serve")
    assert "--any-token" in out
    assert "browser" in out  # it says it does not open one
    assert _parser().parse_args(["serve", "--any-token"]).open is True
    assert _parser().parse_args(["serve", "--open"]).open is True  # the old spelling still works


def test_a_misspelt_option_is_one_line_pointing_to_the_subcommands_help(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["match", "--sed", "1"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("arena match: unrecognized arguments: --sed")
    assert "'arena match --help'" in err and len(err.strip().splitlines()) == 1


def test_a_bare_group_prints_its_own_usage(capsys):
    assert main(["bots"]) == 2
    err = capsys.readouterr().err
    assert "usage: arena bots" in err
    assert "add" in err and "list" in err


@pytest.mark.parametrize("command", SUBCOMMANDS)
def test_each_subcommand_has_help(capsys, command):
    out = help_of(capsys, command)
    assert out.startswith(f"usage: arena {command}")


def test_arena_match_listens_on_a_free_port_by_default():
    # The bots it starts are told the port, so a fixed one would only make
    # `arena match` fail while `arena serve` (or the demo) holds 7000.
    args = _parser().parse_args(["match"])
    assert args.port == 0
    assert _parser().parse_args(["serve"]).port == 7000
