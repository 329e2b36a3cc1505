"""docs/tournaments.md is the reference of the tournament file: every key it
documents is accepted, every key accepted is documented, and its examples load."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from arena.games.muushig.options import MuushigRules
from arena.games.thirteen.rules import ThirteenRules
from arena.tournament.config import (
    ENTRANT_KEYS,
    LIMITS_KEYS,
    SCHEDULE_KEYS,
    TOP_KEYS,
    parse_config,
)

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "tournaments.md").read_text()


def section(title: str) -> str:
    start = DOC.index(f"### {title}\n")
    end = DOC.find("\n### ", start + 1)
    return DOC[start:end if end != -1 else None]


def documented_keys(title: str) -> set[str]:
    return set(re.findall(r"^\| `([a-z_]+)` \|", section(title), flags=re.M))


@pytest.mark.parametrize("title, keys", [
    ("Top level", TOP_KEYS), ("`[limits]`", LIMITS_KEYS), ("`[schedule]`", SCHEDULE_KEYS),
    ("`[[entrant]]`", ENTRANT_KEYS),
    ("`[rules]` (Muushig)", set(MuushigRules().as_dict())),
    ("`[rules]` (thirteen)", set(ThirteenRules().as_dict())),
])
def test_every_key_is_documented_and_every_documented_key_exists(title, keys):
    assert documented_keys(title) == set(keys)


def examples() -> list[str]:
    return re.findall(r"```toml\n(.*?)```", DOC, flags=re.S)


def test_the_page_has_examples():
    assert len(examples()) >= 3


@pytest.mark.parametrize("index", range(len(examples())))
def test_every_example_loads(index, tmp_path):
    config = parse_config(tomllib.loads(examples()[index]), base_dir=tmp_path)
    assert config.entrants
    for entrant in config.entrants:
        if entrant.cwd is not None:  # relative paths are taken from the file's folder
            assert entrant.cwd.is_relative_to(tmp_path.resolve())


def test_defaults_in_the_reference_are_the_parser_defaults(tmp_path):
    config = parse_config({"name": "x", "entrant": [{"name": "a", "remote": True}]},
                          base_dir=tmp_path)
    top = section("Top level")
    assert f"| `seed` | integer ≥ 0 | `{config.seed}` |" in top
    assert f"| `parallel` | integer 1–64 | `{config.parallel}` |" in top
    assert "| `duplicate` | boolean | `true` |" in top and config.duplicate
    limits = section("`[limits]`")
    assert f"| `{config.limits.decision_ms}` |" in limits
    assert f"| `bank_ms` | integer 0–3600000 | `{config.limits.bank_ms}` |" in limits
    assert f"| `max_tables` | integer 1–100000 | `{config.schedule.max_tables}` |" in section(
        "`[schedule]`")


def test_the_demo_file_loads_and_plays_a_few_dozen_matches():
    from arena.tournament.config import load_config
    from arena.tournament.plan import plan

    config = load_config(ROOT / "examples" / "demo.toml")
    assert 24 <= len(plan(config, seats=5, default_house_bot="heuristic")) <= 60


def test_thirteen_rule_defaults_in_the_reference_are_the_game_defaults():
    rows = {m[0]: m[1] for m in re.findall(r"^\| `([a-z_]+)` \| [^|]+ \| `([^`]+)` \|",
                                            section("`[rules]` (thirteen)"), flags=re.M)}
    defaults = ThirteenRules().as_dict()
    assert rows == {k: f'"{v}"' if isinstance(v, str) else str(v) for k, v in defaults.items()}
