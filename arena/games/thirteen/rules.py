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

from arena.games.rule_options import check_choice, check_int, merged_options
from arena.games.thirteen.evaluator import Wheel

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
    wheel: Wheel = "lowest"
    foul_policy: str = "penalize"
    shoot: str = "plus3"
    mid_full_house_bonus: int = 2

    @classmethod
    def from_dict(cls, rules: Mapping[str, Any] | None) -> "ThirteenRules":
        if rules is None:
            return cls()
        values = merged_options(cls(), rules, "thirteen")
        check_int(values, "deals", 1, MAX_DEALS)
        check_int(values, "players", 2, 4)
        for key, allowed in _CHOICES.items():
            check_choice(values, key, allowed)
        return cls(**values)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)
