"""Rule options of a thirteen-card match (``match_start.rules``).

Every flag of the rules page with its default; ``as_dict`` always carries
every one of them with its exact value (protocol §5.1). Unknown keys and bad
values are refused with a message naming the key and what is allowed, so a
misconfigured tournament fails before its first deal.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from arena.games.base import RuleConfigError

MAX_DEALS = 1000

_CHOICES: dict[str, tuple[Any, ...]] = {
    "wheel": ("lowest", "second_highest"),
    "foul_policy": ("penalize", "reject"),
    "shoot": ("plus3", "double"),
    "mid_full_house_bonus": (2, 1),
}


@dataclass(frozen=True, slots=True)
class ThirteenRules:
    deals: int = 10
    players: int = 4
    wheel: str = "lowest"
    foul_policy: str = "penalize"
    shoot: str = "plus3"
    mid_full_house_bonus: int = 2

    @classmethod
    def from_dict(cls, rules: Mapping[str, Any] | None) -> "ThirteenRules":
        if rules is None:
            return cls()
        if not isinstance(rules, Mapping):
            raise RuleConfigError(f"rules must be a mapping of option names to values, not {type(rules).__name__}")
        known = cls.__dataclass_fields__
        unknown = sorted(str(k) for k in rules if k not in known)
        if unknown:
            raise RuleConfigError(
                f"unknown thirteen rule option(s) {', '.join(unknown)}; known options: {', '.join(sorted(known))}"
            )
        values = {**asdict(cls()), **rules}
        _check_int(values, "deals", 1, MAX_DEALS)
        _check_int(values, "players", 2, 4)
        for key, allowed in _CHOICES.items():
            v = values[key]
            # bool is an int: True must not pass for the bonus 1
            if isinstance(v, bool) or v not in allowed:
                shown = " or ".join(repr(a) for a in allowed)
                raise RuleConfigError(f"rule option {key} must be {shown}, not {v!r}")
        return cls(**values)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _check_int(values: dict[str, Any], key: str, low: int, high: int) -> None:
    v = values[key]
    if isinstance(v, bool) or not isinstance(v, int) or not low <= v <= high:
        raise RuleConfigError(f"rule option {key} must be an integer from {low} to {high}, not {v!r}")
