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

from arena.games.rule_options import check_bool, check_int, merged_options

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
        values = merged_options(cls(), rules, "Muushig")
        check_int(values, "max_hands", 1, MAX_HANDS_LIMIT)
        check_int(values, "auto_enter_after_folds", 0, AUTO_ENTER_LIMIT)
        check_int(values, "players", 2, 5)
        for key in ("last_two_forced", "trump_ace_first_lead"):
            check_bool(values, key)
        return cls(**values)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)
