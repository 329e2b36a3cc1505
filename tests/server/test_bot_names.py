"""One rule for bot names (1-32 characters, the house family reserved),
the same at the bot port, the web and the CLI."""

from __future__ import annotations

import pytest

from arena.server.identity import IdentityError, OpenNames
from arena.web.errors import ApiError, check_bot_name
from protocol.names import bot_name_problem

REFUSED = ["x" * 33, "house", "house-foo", "House_bar", "house.1", "bad name", ""]
ACCEPTED = ["x" * 32, "a", "housemate", "my-house", "bot_1.v2"]


@pytest.mark.parametrize("name", REFUSED)
def test_a_name_breaking_the_rule_is_refused_everywhere(name):
    assert bot_name_problem(name) is not None
    with pytest.raises(IdentityError):
        OpenNames().resolve("tokenhash", name)
    with pytest.raises(ApiError):
        check_bot_name(name)


@pytest.mark.parametrize("name", ACCEPTED)
def test_a_name_within_the_rule_is_accepted_everywhere(name):
    assert bot_name_problem(name) is None
    assert OpenNames().resolve("tokenhash", name) == name
    assert check_bot_name(name) == name


def test_the_house_bots_own_names_are_still_seated():
    names = OpenNames()
    names.reserve("house-heuristic-1", "local")  # the arena's own bot, not a hello
    assert names.resolve("local", None) == "house-heuristic-1"
