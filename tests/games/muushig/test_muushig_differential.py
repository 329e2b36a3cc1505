"""The engine against the plain reference implementation: same decks, same
choices, so the same requests, events (record form) and result."""

import pytest

from .differential import compare_with_reference


@pytest.mark.parametrize("block", range(6))
def test_standard_rules_match_the_reference(block):
    for seed in range(block * 10, block * 10 + 10):
        compare_with_reference(seed)


@pytest.mark.parametrize(
    "rules",
    [
        {"max_hands": 2},
        {"players": 4},
        {"players": 3},
        {"players": 2},
        {"last_two_forced": True},
        {"auto_enter_after_folds": 3},
        {"trump_ace_first_lead": True},
        {"players": 3, "last_two_forced": True, "auto_enter_after_folds": 1, "trump_ace_first_lead": True,
         "max_hands": 15},
    ],
)
def test_variants_match_the_reference(rules):
    for seed in range(8):
        compare_with_reference(1000 + seed, rules)
