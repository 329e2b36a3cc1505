"""Tournament files: defaults, path resolution, and errors that name the key."""

from __future__ import annotations

import textwrap
import tomllib

import pytest

from arena.tournament.config import ConfigError, TournamentLimits, load_config, parse_config
from arena.tournament.plan import house_for, house_strategy, plan, scheduled_matches
from arena.tournament.schedule import ScheduleKind

FULL = """
name = "Spring cup"
game = "muushig"
seed = 7
duplicate = false
parallel = 3

[limits]
decision_ms = 500
bank_ms = 2000

[rules]
last_two_forced = true

[schedule]
kind = "balanced"
max_tables = 10
tables = 12
house_bot = "random"

[[entrant]]
name = "alpha"
command = ["./bots/alpha", "--fast"]
cwd = "bots"

[[entrant]]
name = "beta"
command = ["python3", "beta.py"]

[[entrant]]
name = "gamma"
remote = true
"""


def write(tmp_path, text: str):
    path = tmp_path / "cup.toml"
    path.write_text(textwrap.dedent(text))
    return path


def test_a_full_file_is_read(tmp_path):
    config = load_config(write(tmp_path, FULL))
    assert config.name == "Spring cup" and config.game == "muushig" and config.seed == 7
    assert not config.duplicate and config.parallel == 3
    assert config.limits == TournamentLimits(decision_ms=500, bank_ms=2000)
    assert config.rules == {"last_two_forced": True}
    assert config.schedule.kind is ScheduleKind.BALANCED
    assert (config.schedule.max_tables, config.schedule.tables) == (10, 12)
    assert config.schedule.house_bot == "random"
    alpha, beta, gamma = config.entrants
    base = tmp_path.resolve()
    assert alpha.command == (str(base / "bots" / "alpha"), "--fast")
    assert alpha.cwd == base / "bots" and alpha.local and not alpha.remote
    assert beta.command == ("python3", "beta.py") and beta.cwd == base  # PATH lookup kept
    assert gamma.remote and gamma.command is None and not gamma.local
    assert config.source == (tmp_path / "cup.toml").resolve()
    wire = config.to_wire()
    assert wire["entrants"][2] == {"name": "gamma", "command": None, "cwd": None,
                                   "remote": True}
    assert wire["schedule"]["kind"] == "balanced" and wire["limits"]["bank_ms"] == 2000


def test_defaults(tmp_path):
    config = load_config(write(tmp_path, """
        name = "tiny"
        [[entrant]]
        name = "solo"
        remote = true
    """))
    assert config.game == "muushig" and config.seed == 0 and config.duplicate
    assert config.parallel == 1 and config.rules == {}
    assert config.schedule.kind is ScheduleKind.AUTO and config.schedule.tables is None
    assert config.limits == TournamentLimits()


@pytest.mark.parametrize("snippet,key,words", [
    ('name = 3', "name", "non-empty string"),
    ('game = "chess"', "game", "unknown game 'chess'"),
    ('seed = "x"', "seed", "integer"),
    ('seed = -1', "seed", "at least 0"),
    ('duplicate = "yes"', "duplicate", "true or false"),
    ('parallel = 0', "parallel", "at least 1"),
    ('parallel = 1000', "parallel", "at most"),
    ('colour = "red"', "colour", "unknown key"),
    ('limits = 5', "limits", "must be a table"),
    ('[limits]\ndecision_ms = 0', "limits.decision_ms", "at least 1"),
    ('[limits]\nbank = 1', "limits.bank", "unknown key"),
    ('[schedule]\nkind = "knockout"', "schedule.kind", "'knockout' is not one of"),
    ('[schedule]\ntables = 1.5', "schedule.tables", "integer"),
    ('[schedule]\nmax_tables = true', "schedule.max_tables", "integer"),
])
def test_top_level_errors_name_the_key(tmp_path, snippet, key, words):
    base = 'name = "cup"\n'
    if snippet.startswith("name"):
        base = ""
    text = base + snippet + '\n[[entrant]]\nname = "a"\nremote = true\n'
    if snippet.startswith("["):  # a table must come after the top-level keys
        text = base + '[[entrant]]\nname = "a"\nremote = true\n' + snippet + "\n"
    with pytest.raises(ConfigError) as info:
        parse_config(tomllib.loads(text))
    assert info.value.key == key
    assert str(info.value).startswith(f"{key}: ") and words in str(info.value)


@pytest.mark.parametrize("entrants,key,words", [
    ('', "entrant", "at least one"),
    ('[[entrant]]\nremote = true', "entrant[0].name", "required"),
    ('[[entrant]]\nname = "a b"\nremote = true', "entrant[0].name", "letters, digits"),
    ('[[entrant]]\nname = "house-x-1"\nremote = true', "entrant[0].name", "reserved"),
    ('[[entrant]]\nname = "a"', "entrant[0].command", "remote = true, or hosted = true"),
    ('[[entrant]]\nname = "a"\nhosted = true', "entrant[0].version", "needs version = N"),
    ('[[entrant]]\nname = "a"\nversion = 2', "entrant[0].hosted", "give hosted = true"),
    ('[[entrant]]\nname = "a"\nhosted = true\nversion = 0', "entrant[0].version",
     "at least 1"),
    ('[[entrant]]\nname = "a"\nhosted = true\nversion = 2\nremote = true',
     "entrant[0].remote", "no remote"),
    ('[[entrant]]\nname = "a"\nhosted = true\nversion = 2\ncommand = ["x"]',
     "entrant[0].command", "no command"),
    ('[[entrant]]\nname = "' + "b" * 30 + '"\nhosted = true\nversion = 12', "entrant[0].name",
     "shorter bot names"),
    ('[[entrant]]\nname = "a"\nhosted = true\nversion = 2\n'
     '[[entrant]]\nname = "a"\nhosted = true\nversion = 2', "entrant[1].name", "used twice"),
    ('[[entrant]]\nname = "a"\nremote = true\ncommand = ["x"]', "entrant[0].command",
     "not both"),
    ('[[entrant]]\nname = "a"\ncommand = []', "entrant[0].command", "non-empty list"),
    ('[[entrant]]\nname = "a"\ncommand = "bot.py"', "entrant[0].command", "non-empty list"),
    ('[[entrant]]\nname = "a"\nremote = true\ncwd = "x"', "entrant[0].cwd", "local"),
    ('[[entrant]]\nname = "a"\nremote = true\nport = 1', "entrant[0].port", "unknown key"),
    ('[[entrant]]\nname = "a"\nremote = true\n[[entrant]]\nname = "a"\nremote = true',
     "entrant[1].name", "used twice"),
])
def test_entrant_errors_name_the_entrant(entrants, key, words):
    with pytest.raises(ConfigError) as info:
        parse_config(tomllib.loads('name = "cup"\n' + entrants + "\n"))
    assert info.value.key == key and words in str(info.value)


def test_a_hosted_version_sits_as_name_dot_v_number_beside_its_other_versions():
    from arena.tournament.config import config_from_wire

    config = parse_config(tomllib.loads(
        'name = "v7 or v6"\n[schedule]\nkind = "gauntlet"\nchallenger = "mybot.v7"\n'
        '[[entrant]]\nname = "mybot"\nhosted = true\nversion = 7\n'
        '[[entrant]]\nname = "mybot"\nhosted = true\nversion = 6\n'
        '[[entrant]]\nname = "rival"\nremote = true\n'))
    assert config.entrant_names == ["mybot.v7", "mybot.v6", "rival"]
    v7 = config.entrants[0]
    assert v7.hosted and (v7.bot, v7.version) == ("mybot", 7)
    assert not v7.local and not v7.remote
    assert not config.entrants[2].hosted
    # Stored and read back (a resume, another node) it is the same file.
    assert config_from_wire(config.to_wire()).entrants == config.entrants
    # What the pages and the API read of it is the name it sits under.
    assert config.to_wire()["entrants"][0] == {"name": "mybot.v7", "hosted": True,
                                               "bot": "mybot", "version": 7}


def test_unreadable_and_invalid_files(tmp_path):
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "missing.toml")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(write(tmp_path, "name = \n"))


def test_plan_turns_a_config_into_schedule_rows(tmp_path):
    config = load_config(write(tmp_path, """
        name = "duo"
        seed = 3
        [[entrant]]
        name = "a"
        remote = true
        [[entrant]]
        name = "b"
        remote = true
    """))
    assert house_for(config, seats=5, default_house_bot="heuristic") == [
        "house-heuristic-1", "house-heuristic-2", "house-heuristic-3"]
    tables = plan(config, seats=5, default_house_bot="heuristic")
    assert len(tables) == 5 and {t.seed for t in tables} == {"3:0"}
    rows = scheduled_matches("t1", tables)
    assert [r.slot for r in rows] == [0, 1, 2, 3, 4]
    assert rows[2].extra == {"table": 0, "rotation": 2} and rows[2].match_id is None
    assert house_strategy("house-heuristic-3") == "heuristic"
    assert house_strategy("house-x") is None and house_strategy("alpha") is None
