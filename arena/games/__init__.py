"""The games: pure rules engines, and the registry that names them.

This is the only place that names concrete games (:mod:`.muushig`,
:mod:`.thirteen`); everything else asks :func:`get_game` for a
:class:`~.base.GameSpec`. Games import nothing of the arena but
:mod:`arena.games.base` and ``protocol`` (the bottom layer).

Errors::

    GameError
    ├── IllegalActionError   an action the rules do not allow now (state unchanged)
    ├── NotYourTurnError     a seat acted out of turn
    ├── RuleConfigError      a rules dict the game cannot play
    ├── UnknownGameError     no game of that name (also a LookupError)
    └── ReplayError          a stored event log that does not replay (per game)
"""

from __future__ import annotations

import importlib

from arena.games.base import GameError, GameSpec

_MODULES = {
    "muushig": "arena.games.muushig",
    "thirteen": "arena.games.thirteen",
}


class UnknownGameError(GameError, LookupError):
    """No game of that name is registered (the message lists the known ones)."""


def get_game(name: str) -> GameSpec:
    """Return the spec of game ``name`` (its module exposes ``SPEC``)."""
    try:
        module = importlib.import_module(_MODULES[name])
    except KeyError:
        raise UnknownGameError(
            f"unknown game {name!r}; known games: {', '.join(sorted(_MODULES))}"
        ) from None
    return module.SPEC


def game_names() -> list[str]:
    return sorted(_MODULES)
