"""Rule options of a Muushig match (``match_start.rules``).

Every variant of the rules page is off by default; ``max_hands`` is the
safety bound of rules §8.5. Unknown keys and bad values are refused with a
message naming the key and what is allowed, so a misconfigured tournament
fails before its first deal.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from arena.games.base import RuleConfigError

MAX_HANDS_LIMIT = 10_000
AUTO_ENTER_LIMIT = 100


@dataclass(frozen=True, slots=True)
class MuushigRules:
    max_hands: int = 200
    last_two_forced: bool = False
    auto_enter_after_folds: int = 0  # 0 = off; the rules page uses 3
    trump_ace_first_lead: bool = False
    players: int = 5

    @property
    def n_rounds(self) -> int:
        # Seed 002: a match has as many rounds as players, each started by a
        # different dealer; with the standard five seats that is 5.
        return self.players

    @classmethod
    def from_dict(cls, rules: Mapping[str, Any] | None) -> "MuushigRules":
        if rules is None:
            return cls()
        if not isinstance(rules, Mapping):
            raise RuleConfigError(f"rules must be a mapping of option names to values, not {type(rules).__name__}")
        known = cls.__dataclass_fields__
        unknown = sorted(str(k) for k in rules if k not in known)
        if unknown:
            raise RuleConfigError(
                f"unknown Muushig rule option(s) {', '.join(unknown)}; known options: {', '.join(sorted(known))}"
            )
        values = {**asdict(cls()), **rules}
        _check_int(values, "max_hands", 1, MAX_HANDS_LIMIT)
        _check_int(values, "auto_enter_after_folds", 0, AUTO_ENTER_LIMIT)
        _check_int(values, "players", 2, 5)
        for key in ("last_two_forced", "trump_ace_first_lead"):
            if not isinstance(values[key], bool):
                raise RuleConfigError(f"rule option {key} must be true or false, not {values[key]!r}")
        return cls(**values)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _check_int(values: dict[str, Any], key: str, low: int, high: int) -> None:
    v = values[key]
    if isinstance(v, bool) or not isinstance(v, int) or not low <= v <= high:
        raise RuleConfigError(f"rule option {key} must be an integer from {low} to {high}, not {v!r}")
