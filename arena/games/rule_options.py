"""Reading a game's rule options: the checks every game's rules share.

A game's rules are a frozen dataclass of options with defaults; a rules
dict from a bot, a CLI or a tournament file is merged over the defaults and
every value checked, with messages that name the option and its allowed
values.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from arena.games.base import RuleConfigError


def merged_options(defaults: Any, rules: Mapping[str, Any], game: str) -> dict[str, Any]:
    """``rules`` over the options of the dataclass instance ``defaults``;
    unknown option names are refused."""
    if not isinstance(rules, Mapping):
        raise RuleConfigError(f"rules must be a mapping of option names to values, not {type(rules).__name__}")
    known = type(defaults).__dataclass_fields__
    unknown = sorted(str(k) for k in rules if k not in known)
    if unknown:
        raise RuleConfigError(
            f"unknown {game} rule option(s) {', '.join(unknown)}; known options: {', '.join(sorted(known))}"
        )
    return {**asdict(defaults), **rules}


def check_int(values: Mapping[str, Any], key: str, low: int, high: int) -> None:
    v = values[key]
    # bool is an int in Python, never a count on the wire.
    if isinstance(v, bool) or not isinstance(v, int) or not low <= v <= high:
        raise RuleConfigError(f"rule option {key} must be an integer from {low} to {high}, not {v!r}")


def check_bool(values: Mapping[str, Any], key: str) -> None:
    if not isinstance(values[key], bool):
        raise RuleConfigError(f"rule option {key} must be true or false, not {values[key]!r}")


def check_choice(values: Mapping[str, Any], key: str, allowed: tuple[Any, ...]) -> None:
    v = values[key]
    # bool is an int: True must not pass for the value 1.
    if isinstance(v, bool) or v not in allowed:
        shown = " or ".join(repr(a) for a in allowed)
        raise RuleConfigError(f"rule option {key} must be {shown}, not {v!r}")
