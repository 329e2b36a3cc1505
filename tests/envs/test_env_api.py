"""Both games pass PettingZoo's own API and seed tests, under every rule
option, with and without house-bot opponents."""

from __future__ import annotations

import warnings

import pytest

pytest.importorskip("pettingzoo", reason="the rl extra: pip install -e '.[rl]'")

from pettingzoo.test import api_test, seed_test  # noqa: E402

from arena.envs import muushig, thirteen  # noqa: E402
from arena.games.base import RuleConfigError  # noqa: E402

MUUSHIG_OPTIONS = [
    {},
    {"players": 2},
    {"players": 3, "last_two_forced": True},
    {"players": 4, "auto_enter_after_folds": 3, "trump_ace_first_lead": True, "max_hands": 20},
]
THIRTEEN_OPTIONS = [
    {"deals": 2},
    {"deals": 2, "players": 2, "wheel": "second_highest"},
    {"deals": 2, "players": 3, "foul_policy": "reject", "shoot": "double", "mid_full_house_bonus": 1},
]


def _api_test(env, cycles: int) -> None:
    # PettingZoo warns that a dict observation (features and action mask) is
    # not one array: the masked form its own card games use.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        api_test(env, num_cycles=cycles)


@pytest.mark.parametrize("rules", MUUSHIG_OPTIONS, ids=repr)
def test_muushig_passes_the_api_test(rules):
    _api_test(muushig.env(seed=7, **rules), 1000)


@pytest.mark.parametrize("rules", THIRTEEN_OPTIONS, ids=repr)
def test_thirteen_passes_the_api_test(rules):
    _api_test(thirteen.env(seed=7, **rules), 40)


def test_both_pass_with_house_bots_in_some_seats():
    _api_test(muushig.env(seed=1, opponents={0: "heuristic", 3: "random"}), 500)
    _api_test(thirteen.env(seed=1, deals=2, opponents={1: "strong", 2: "random"}), 20)


def test_both_pass_the_seed_test():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        seed_test(lambda: muushig.env(), num_cycles=300)
        seed_test(lambda: thirteen.env(deals=2), num_cycles=10)


@pytest.mark.parametrize("make, rules, words", [
    (muushig.env, {"max_hands": 0}, "max_hands must be an integer from 1"),
    (muushig.env, {"maxhands": 3}, "unknown Muushig rule option(s) maxhands"),
    (thirteen.env, {"wheel": "highest"}, "wheel must be 'lowest' or 'second_highest'"),
    (muushig.env, {"opponents": {5: "heuristic"}}, "opponent seat 5: seats are 0 to 4"),
    (muushig.env, {"opponents": {1: "strong"}}, "no muushig house bot 'strong'"),
    (thirteen.env, {"opponents": {0: "strong", 1: "strong", 2: "strong", 3: "strong"}},
     "leave at least one seat to the agents"),
])
def test_a_bad_rule_option_or_opponent_is_refused_with_a_reason(make, rules, words):
    with pytest.raises(RuleConfigError) as caught:
        make(**rules)
    assert words in str(caught.value)
